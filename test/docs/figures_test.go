package docs_test

// Published benchmark figures and their sources.
//
// A figure is a number with a unit: MiB, KiB, GiB, B, MB, ms, µs, s,
// req/s or /s, ×, % (a thin, no-break or plain space, or a comma, may
// group thousands: "19 095 req/s"). It is normalised to its value and
// unit, "19 095 req/s" to 19095/s (every rate is /s, as the driver prints
// it), "3.66 s" to 3.66s, "1.50×" to 1.5×; a bare decimal number is a
// ratio only in a table column or row whose label has a "/" or "ratio"
// (B/A, A / limit, written / ceiling), or after a name that has one
// ("rate/echo 0.82", "B/A 1.08", a log's ratio=1.32). A unit belongs to every number of a list or range it ends
// ("320.6–370.0 MiB", "98.6 against 61.8 ms", "61.5/61.7 MiB"), and to a
// bracketed range or list right after a figure ("72.6 ms (69.4–97.0)";
// one bracketed number is a count: "85–103 ms (8)"). Not
// figures: numbers without a unit (object and request counts), Kubernetes
// quantities (512Mi), code spans (flags, commands), a table's first column
// (what the row measures: "100 ChaosPods, 60 s"), and a number after a
// comparison (≤, ≥, <, >, at most, at least, more, less or fewer than,
// under, below, above, over), which is a goal or a bound, not a
// measurement. A setting is written as code, as in a manifest or on a
// command line (`15s`, `tolerationSeconds: 300`), and so is no figure.
//
// The sources are the tables of docs/performance.md, the text of
// docs/scale.svg and the logs those tables name. Two rules hold them:
//
//   - Quotes: every figure of README.md, docs/deploying.md and the prose of
//     docs/performance.md is a figure of a source (a table of the same
//     page is held to the same sources, so quoting it is quoting them). A
//     figure that is not is either a stale quote or a figure derived by
//     hand; quote the table's figure, or point at the table without one.
//     notMeasurements lists the few figures that are no benchmark's (a
//     limit of kubectl, the size of a generated file), each with its
//     reason.
//   - Tables: every table of docs/performance.md has, on a line of its own
//     above it in its section (after the section's heading), the commit it
//     ran at and the log of that run committed to the repository, in
//     exactly this form:
//
//     Run: commit `abc1234`, log [`bench/results/2026-12-07-ab.log`](../bench/results/2026-12-07-ab.log)
//
//     The commit must be in git history, the log must exist, and every
//     figure of the table (its first column aside) must be in the log:
//     the driver's stdout and stderr, whose header line names the commit
//     (which must be the Run line's) and whose last lines are the table of
//     medians to paste from. Several runs in one section each have their
//     own Run line above their table.
//
// The rules are plain functions, fed with fixtures here that must fail;
// TestQuotedFiguresHaveASource holds README.md and docs/deploying.md to
// the sources.

import (
	"fmt"
	"html"
	"math"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// notMeasurements are figures in the quoting docs that are no benchmark's:
// doc, the normalised figure, and why it needs no source.
var notMeasurements = []struct{ doc, figure, why string }{
	{"docs/deploying.md", "256KiB", "client-side apply's limit on its last-applied annotation, a fact of kubectl"},
	{"docs/deploying.md", "1.25MB", "the size of the CRD controller-gen writes, which make generate trims"},
}

// quotingDocs are held to the sources by the committed test.
var quotingDocs = []string{"README.md", "docs/deploying.md"}

func TestQuotedFiguresHaveASource(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	sources := publishedFigures(t, root)
	for _, doc := range quotingDocs {
		for _, problem := range quoteProblems(doc, readDoc(t, doc), sources) {
			t.Error(problem)
		}
	}
}

// The extractors still read the sources: a change of their format that
// left the sources empty would let every quote fail, or, with a lenient
// rule, pass.
func TestTheSourcesHoldFigures(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	tables := markdownTables(readDoc(t, "docs/performance.md"))
	assert.NotEmpty(t, tables, "docs/performance.md holds no table")
	svg := svgFigures(readDoc(t, "docs/scale.svg"))
	assert.NotEmpty(t, svg, "docs/scale.svg holds no figure")
	assert.NotEmpty(t, publishedFigures(t, root).places)
}

// figureSources maps each normalised figure of the sources to where it
// stands first.
type figureSources struct {
	places map[string]string
}

func (s *figureSources) add(norm, place string) {
	if s.places == nil {
		s.places = map[string]string{}
	}
	if _, ok := s.places[norm]; !ok {
		s.places[norm] = place
	}
}

// publishedFigures reads the sources of the repository: docs/performance.md's
// tables, docs/scale.svg and the logs the tables' Run lines name.
func publishedFigures(t *testing.T, root string) figureSources {
	t.Helper()
	var s figureSources
	const perf = "docs/performance.md"
	text := readDoc(t, perf)
	for _, table := range markdownTables(text) {
		for _, f := range table.figures() {
			s.add(f.norm, fmt.Sprintf("%s:%d", perf, f.line))
		}
	}
	for _, f := range svgFigures(readDoc(t, "docs/scale.svg")) {
		s.add(f.norm, fmt.Sprintf("docs/scale.svg:%d", f.line))
	}
	for _, run := range runLines(perf, text) {
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(run.log)))
		if err != nil {
			continue // the table rule says so
		}
		for norm := range logFigures(string(data)) {
			s.add(norm, run.log)
		}
	}
	return s
}

// figure is one figure token of a text.
type figure struct {
	text string // as written, with the list or range it is part of
	norm string // value and unit, e.g. 19095/s
	line int
}

var (
	// figureNumber: digits, thousands grouped by a space (plain, thin,
	// no-break) or a comma, and decimals.
	figureNumber = regexp.MustCompile(`\d{1,3}(?:[ \x{2009}\x{202F}\x{00A0}]\d{3})+(?:\.\d+)?|\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?`)
	// figureUnit follows a number, after at most one space.
	figureUnit = regexp.MustCompile(`^[ \t\n\x{2009}\x{202F}\x{00A0}]?(req/s|/s|MiB|KiB|GiB|MB|µs|μs|ms|s|B|×|%)`)
	// figureLink joins the numbers of one list or range.
	figureLink = regexp.MustCompile(`^(?:\s*[–/]\s*|,\s*(?:and\s+|or\s+)?|\s+(?:and|or|against|to)\s+)$`)
	// figureBracket opens a bracketed range after a figure.
	figureBracket = regexp.MustCompile(`^\s*\((?:runs:?\s+)?$`)
	// figureBound ends the text before a goal or a bound.
	figureBound = regexp.MustCompile(`(?:[≤≥<>]|\bat most|\bat least|\b(?:more|less|fewer) than|\bunder|\bbelow|\babove|\bover)\s*$`)
	// markdownLinkTarget is blanked with code spans: anchors hold numbers.
	markdownLinkTarget = regexp.MustCompile(`\]\([^)\n]*\)`)
)

// numberAt is a number of a text, with the unit that follows it, if any.
type numberAt struct {
	start, end int // of the digits
	unit       string
	unitEnd    int
}

// placedFigure is a figure at a byte offset of a text.
type placedFigure struct {
	figure
	at int
}

// figuresIn returns the figures of s with their byte offsets in s; with
// ratios, a bare decimal number is a ratio.
func figuresIn(s string, ratios bool) []placedFigure {
	s = strings.ReplaceAll(s, "*", " ") // bold, same length
	var nums []numberAt
	for _, m := range figureNumber.FindAllStringIndex(s, -1) {
		if r, _ := utf8.DecodeLastRuneInString(s[:m[0]]); m[0] > 0 && (unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("_.-:#", r)) {
			continue // inside a word, a version, a date or a time
		}
		if rest := s[m[1]:]; len(rest) > 1 && rest[0] == '.' && rest[1] >= '0' && rest[1] <= '9' {
			continue // a version
		}
		n := numberAt{start: m[0], end: m[1]}
		if u := figureUnit.FindStringSubmatchIndex(s[m[1]:]); u != nil {
			unit := s[m[1]+u[2] : m[1]+u[3]]
			after, _ := utf8.DecodeRuneInString(s[m[1]+u[1]:])
			word := unicode.IsLetter(after) || unicode.IsDigit(after)
			if !word || unit == "×" || unit == "%" {
				if unit != "B" || after != '/' {
					n.unit, n.unitEnd = unit, m[1]+u[1]
				}
			}
		}
		nums = append(nums, n)
	}
	var figures []placedFigure
	lastUnit, lastEnd := "", -1
	for i := 0; i < len(nums); {
		j := i // the chain is nums[i..j]
		for nums[j].unit == "" && j+1 < len(nums) && figureLink.MatchString(s[nums[j].end:nums[j+1].start]) {
			j++
		}
		first, last := nums[i], nums[j]
		unit, end := last.unit, max(last.end, last.unitEnd)
		if unit == "" && j > i && lastEnd >= 0 && figureBracket.MatchString(s[lastEnd:first.start]) &&
			strings.HasPrefix(strings.TrimSpace(s[last.end:]), ")") {
			unit = lastUnit
		}
		bound := figureBound.MatchString(s[max(0, first.start-24):first.start])
		named := namesARatio(s[:first.start])
		for k := i; k <= j; k++ {
			n := nums[k]
			u := unit
			if u == "" && (ratios || named) && strings.Contains(s[n.start:n.end], ".") {
				u = "×"
			}
			if u == "" || bound {
				continue
			}
			figures = append(figures, placedFigure{figure{text: strings.TrimSpace(s[first.start:end]), norm: normFigure(s[n.start:n.end], u)}, n.start})
		}
		if last.unit != "" {
			lastUnit, lastEnd = last.unit, last.unitEnd
		}
		i = j + 1
	}
	return figures
}

// namesARatio says whether the word before a number names a ratio:
// B/A, rate/echo, ratio, ratios (ratio=1.32 in a log, "B/A 1.08" in prose).
func namesARatio(before string) bool {
	before = strings.TrimRight(before, " =:")
	word := before[strings.LastIndexAny(before, " (\n")+1:]
	return strings.IndexFunc(word, unicode.IsLetter) >= 0 &&
		(strings.Contains(word, "/") || strings.Contains(strings.ToLower(word), "ratio"))
}

// normFigure is a figure's value and unit, as the sources are compared.
func normFigure(digits, unit string) string {
	digits = strings.Map(func(r rune) rune {
		if r == ',' || unicode.IsSpace(r) {
			return -1
		}
		return r
	}, digits)
	v, err := strconv.ParseFloat(digits, 64)
	if err != nil {
		return digits + unit
	}
	switch unit {
	case "req/s":
		unit = "/s"
	case "μs": // Greek mu, for the micro sign
		unit = "µs"
	}
	if v == 0 && (unit == "ms" || unit == "µs") {
		unit = "s" // the driver prints a zero duration as 0s
	}
	return strconv.FormatFloat(v, 'f', -1, 64) + unit
}

// figuresAt returns the figures of a text, numbered by the line each
// starts on, the first line being first.
func figuresAt(s string, ratios bool, first int) []figure {
	var out []figure
	for _, f := range figuresIn(s, ratios) {
		f.line = first + strings.Count(s[:f.at], "\n")
		out = append(out, f.figure)
	}
	return out
}

// markdownTable is one table of a markdown text.
type markdownTable struct {
	line   int // of the header row
	header []string
	rows   []tableRow
}

type tableRow struct {
	line  int
	cells []string
}

// figures are the figures of the table's rows, the first column aside; a
// column or row whose label has a "/" or says ratio holds ratios.
func (t markdownTable) figures() []figure {
	var out []figure
	for _, row := range t.rows {
		rowRatios := len(row.cells) > 0 && isRatioLabel(row.cells[0])
		for i, cell := range row.cells {
			if i == 0 {
				continue
			}
			colRatios := i < len(t.header) && isRatioLabel(t.header[i])
			out = append(out, figuresAt(cell, rowRatios || colRatios, row.line)...)
		}
	}
	return out
}

func isRatioLabel(label string) bool {
	label = codeSpan.ReplaceAllString(label, "")
	return strings.Contains(label, "/") || strings.Contains(strings.ToLower(label), "ratio")
}

var tableSeparator = regexp.MustCompile(`^\|?\s*:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)*\|?$`)

// markdownTables returns the tables of a markdown text outside its fenced
// blocks (proseLines), their cells cleared of code spans and link targets.
func markdownTables(text string) []markdownTable {
	type numbered struct {
		n    int
		text string
	}
	var lines []numbered
	for n, line := range proseLines(text) {
		lines = append(lines, numbered{n, strings.TrimSpace(line)})
	}
	// next says whether line i+1 follows line i in the text: a fenced
	// block between them ends a table.
	next := func(i int) bool { return i+1 < len(lines) && lines[i+1].n == lines[i].n+1 }
	var tables []markdownTable
	for i := 0; i < len(lines); i++ {
		if !strings.HasPrefix(lines[i].text, "|") || !next(i) || !tableSeparator.MatchString(lines[i+1].text) {
			continue
		}
		table := markdownTable{line: lines[i].n, header: tableCells(lines[i].text)}
		for i++; next(i) && strings.HasPrefix(lines[i+1].text, "|"); i++ {
			table.rows = append(table.rows, tableRow{line: lines[i+1].n, cells: tableCells(lines[i+1].text)})
		}
		tables = append(tables, table)
	}
	return tables
}

// tableCells splits a row on its unescaped pipes.
func tableCells(row string) []string {
	row = strings.TrimPrefix(row, "|")
	if strings.HasSuffix(row, "|") && !strings.HasSuffix(row, `\|`) {
		row = row[:len(row)-1]
	}
	var cells []string
	var cell strings.Builder
	escaped := false
	for _, r := range row {
		switch {
		case escaped:
			cell.WriteRune(r)
			escaped = false
		case r == '\\':
			escaped = true
		case r == '|':
			cells = append(cells, cleanCell(cell.String()))
			cell.Reset()
		default:
			cell.WriteRune(r)
		}
	}
	return append(cells, cleanCell(cell.String()))
}

func cleanCell(cell string) string {
	return strings.TrimSpace(withoutCode(cell))
}

// withoutCode blanks code spans and link targets, keeping offsets.
func withoutCode(s string) string {
	blank := func(m string) string { return strings.Repeat(" ", len(m)) }
	return markdownLinkTarget.ReplaceAllStringFunc(codeSpan.ReplaceAllStringFunc(s, blank), blank)
}

// proseOf is a markdown text with its fenced blocks, its tables, its code
// spans and its link targets blanked, lines and offsets kept.
func proseOf(text string) string {
	lines := strings.Split(withoutFences(text), "\n")
	for _, t := range markdownTables(text) {
		for i := t.line - 1; i < t.line+1+len(t.rows); i++ {
			lines[i] = ""
		}
	}
	return withoutCode(strings.Join(lines, "\n"))
}

// documentFigures are every figure of a markdown text: its prose's and its
// tables'.
func documentFigures(text string) []figure {
	out := figuresAt(proseOf(text), false, 1)
	for _, t := range markdownTables(text) {
		out = append(out, t.figures()...)
	}
	slices.SortStableFunc(out, func(a, b figure) int { return a.line - b.line })
	return out
}

var svgText = regexp.MustCompile(`(?s)<(text|title)\b[^>]*>(.*?)</(?:text|title)>`)

// svgFigures are the figures of an SVG's text and title elements.
func svgFigures(svg string) []figure {
	var out []figure
	for _, m := range svgText.FindAllStringSubmatchIndex(svg, -1) {
		line := 1 + strings.Count(svg[:m[4]], "\n")
		out = append(out, figuresAt(html.UnescapeString(svg[m[4]:m[5]]), false, line)...)
	}
	return out
}

var logValue = regexp.MustCompile(`=(\S+)`)

// logFigures are the normalised figures of a run's log: its `name=value`
// lines (a bare decimal value is a ratio), its table of medians and any
// other line's.
func logFigures(log string) map[string]bool {
	out := map[string]bool{}
	for _, t := range markdownTables(log) {
		for _, f := range t.figures() {
			out[f.norm] = true
		}
	}
	for _, line := range strings.Split(log, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "|") {
			continue
		}
		for _, f := range figuresIn(line, false) {
			out[f.norm] = true
		}
		for _, m := range logValue.FindAllStringSubmatch(line, -1) {
			for _, f := range figuresIn(m[1], true) {
				out[f.norm] = true
			}
		}
	}
	return out
}

// quoteProblems names each figure of doc that no source holds.
func quoteProblems(doc, text string, sources figureSources) []string {
	var problems []string
	for _, f := range documentFigures(text) {
		if _, ok := sources.places[f.norm]; ok {
			continue
		}
		if slices.ContainsFunc(notMeasurements, func(n struct{ doc, figure, why string }) bool {
			return n.doc == doc && n.figure == f.norm
		}) {
			continue
		}
		problems = append(problems, fmt.Sprintf("%s:%d: %s (%q) is no figure of docs/performance.md's tables, docs/scale.svg or a run's log%s: quote the table's figure, or point at the table without a number",
			doc, f.line, f.norm, f.text, sources.nearest(f.norm)))
	}
	return problems
}

// nearest names the source figure of the same unit closest to norm.
func (s figureSources) nearest(norm string) string {
	v, unit := splitFigure(norm)
	best, bestPlace, bestDiff := "", "", math.Inf(1)
	for other, place := range s.places {
		w, u := splitFigure(other)
		if u != unit {
			continue
		}
		if d := math.Abs(w - v); d < bestDiff || (d == bestDiff && other < best) {
			best, bestPlace, bestDiff = other, place, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (the nearest is %s, %s)", best, bestPlace)
}

func splitFigure(norm string) (float64, string) {
	i := strings.IndexFunc(norm, func(r rune) bool { return r != '.' && !unicode.IsDigit(r) })
	if i < 0 {
		i = len(norm)
	}
	v, _ := strconv.ParseFloat(norm[:i], 64)
	return v, norm[i:]
}

// runLine is a table's statement of its run.
type runLine struct {
	line        int
	commit, log string // log repo-relative
}

var (
	runLineForm = regexp.MustCompile("^Run: commit `([0-9a-f]{7,40})`, log \\[`([^`]+\\.log)`\\]\\(([^)\\s]+)\\)$")
	runHeading  = regexp.MustCompile(`^#{1,6}\s`)
	// logHeader is the first line of the driver's output (bench/report.go).
	logHeader = regexp.MustCompile(`(?m)^# bench: commit ([0-9a-f]+|unknown)(?:-dirty)?,`)
)

const runLineExample = "Run: commit `abc1234`, log [`bench/results/2026-12-07-ab.log`](../bench/results/2026-12-07-ab.log)"

// runLines are the well-formed Run lines of doc.
func runLines(doc, text string) []runLine {
	var out []runLine
	for n, line := range proseLines(text) {
		if r, ok := parseRunLine(doc, n, line); ok && r.log != "" {
			out = append(out, r)
		}
	}
	return out
}

// parseRunLine reads a line that starts with "Run:"; ok is false for
// other lines, and log empty when the line is not in the form.
func parseRunLine(doc string, n int, line string) (runLine, bool) {
	line = strings.TrimSpace(line)
	if !strings.HasPrefix(line, "Run:") {
		return runLine{}, false
	}
	m := runLineForm.FindStringSubmatch(strings.TrimSuffix(line, "."))
	if m == nil || path.Join(path.Dir(doc), m[3]) != m[2] {
		return runLine{line: n}, true
	}
	return runLine{line: n, commit: m[1], log: m[2]}, true
}

// tableSourceProblems holds each table of doc to the run its Run line
// names: the commit is in history (commitExists), the log is in the
// repository (readFile, repo-relative) and holds every figure of the table.
func tableSourceProblems(doc, text string, commitExists func(string) bool, readFile func(string) (string, bool)) []string {
	var problems []string
	lines := strings.Split(text, "\n")
	inProse := map[int]bool{}
	for n := range proseLines(text) {
		inProse[n] = true
	}
	for _, table := range markdownTables(text) {
		var run *runLine
		for n := table.line - 1; n >= 1; n-- {
			if !inProse[n] {
				continue
			}
			if runHeading.MatchString(lines[n-1]) {
				break
			}
			if r, ok := parseRunLine(doc, n, lines[n-1]); ok {
				run = &r
				break
			}
		}
		switch {
		case run == nil:
			problems = append(problems, fmt.Sprintf("%s:%d: the table has no Run line above it in its section: write the commit it ran at and its committed log, as %s", doc, table.line, runLineExample))
			continue
		case run.log == "":
			problems = append(problems, fmt.Sprintf("%s:%d: the Run line is not in the form %s (the link is the log's path from %s)", doc, run.line, runLineExample, path.Dir(doc)))
			continue
		}
		if !commitExists(run.commit) {
			problems = append(problems, fmt.Sprintf("%s:%d: commit %s is not in git history", doc, run.line, run.commit))
		}
		log, ok := readFile(run.log)
		if !ok {
			problems = append(problems, fmt.Sprintf("%s:%d: the log %s is not in the repository: commit the run's output there", doc, run.line, run.log))
			continue
		}
		if m := logHeader.FindStringSubmatch(log); m != nil && m[1] != "unknown" && !strings.HasPrefix(m[1], run.commit) && !strings.HasPrefix(run.commit, m[1]) {
			problems = append(problems, fmt.Sprintf("%s:%d: commit %s, but %s ran at %s", doc, run.line, run.commit, run.log, m[1]))
		}
		inLog := logFigures(log)
		for _, f := range table.figures() {
			if !inLog[f.norm] {
				problems = append(problems, fmt.Sprintf("%s:%d: %s (%q) is not in %s: copy the figure from the run's log", doc, f.line, f.norm, f.text, run.log))
			}
		}
	}
	return problems
}

// gitCommitExists says whether a commit is in the history of root's
// repository.
func gitCommitExists(root string) func(string) bool {
	return func(sha string) bool {
		return exec.Command("git", "-C", root, "cat-file", "-e", sha+"^{commit}").Run() == nil
	}
}

// repoFile reads a repo-relative file.
func repoFile(root string) func(string) (string, bool) {
	return func(rel string) (string, bool) {
		if !filepath.IsLocal(filepath.FromSlash(rel)) {
			return "", false
		}
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
		return string(data), err == nil
	}
}

func TestFiguresIn(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		text   string
		ratios bool
		want   []string // normalised
	}{
		{name: "units, spaced or not", text: "labeled 3.66 s, written 5.37s, p99 7.8 ms, 25.3 µs, 13 %, 0.82×",
			want: []string{"3.66s", "5.37s", "7.8ms", "25.3µs", "13%", "0.82×"}},
		{name: "sizes", text: "RSS 47.8 MiB, 1 074 B per object, 20.0KiB, 24 GiB, 1.25 MB",
			want: []string{"47.8MiB", "1074B", "20KiB", "24GiB", "1.25MB"}},
		{name: "thousands grouped by a space, a thin space, a comma", text: "19 095 req/s, 23\u2009387 req/s, 1,234/s, 19095/s",
			want: []string{"19095/s", "23387/s", "1234/s", "19095/s"}},
		{name: "a range takes its unit at both ends", text: "(320.6–370.0 MiB)", want: []string{"320.6MiB", "370MiB"}},
		{name: "lists take their unit", text: "98.6 against 61.8 ms; 68.1, 134.9, 323.3 and 290.9 MiB; 61.5/61.7 MiB; from 85, 92 and 86 ms to 40 ms",
			want: []string{"98.6ms", "61.8ms", "68.1MiB", "134.9MiB", "323.3MiB", "290.9MiB", "61.5MiB", "61.7MiB", "85ms", "92ms", "86ms", "40ms"}},
		{name: "a bracketed range takes the unit before it", text: "**72.6 ms** (69.4–97.0), heap 23.4 MiB (runs 22.6–26.5), p99 61 ms (runs: 61, 82, 53)",
			want: []string{"72.6ms", "69.4ms", "97ms", "23.4MiB", "22.6MiB", "26.5MiB", "61ms", "61ms", "82ms", "53ms"}},
		{name: "a bracket of one number is a count", text: "85–103 ms (8)", want: []string{"85ms", "103ms"}},
		{name: "a bracket that says something else does not", text: "3.66 s (1.03 the limit)", want: []string{"3.66s"}},
		{name: "goals and bounds are not measurements", text: "p99 ≤ 50 ms, rate ≥ 0.95×, under 5 MiB, at most 2 MiB, below 700 B, above 1.1×, < 3 s, more than 10 %, over 1 s, fewer than 2 s",
			want: nil},
		{name: "only what the bound is about", text: "under 5 MiB, 22.6 MiB without", want: []string{"22.6MiB"}},
		{name: "no unit, no figure", text: "2000 ReplicaSets, 20 000 reviews, c=32, 512Mi and 64Mi, 16 workers, 2-core, 50000x3"},
		{name: "words, versions, dates, times and hashes are not figures", text: "v0.25.3, p99, 2026-12-06 07:44–08:17 UTC, 8a05c7a, e2e, 1.5.3 s"},
		{name: "a B/A label is no byte count", text: "1 076/1 078 B per object, 2 B/A", want: []string{"1076B", "1078B"}},
		{name: "a unit over a line break", text: "(1 076/1 078\nB per object)", want: []string{"1076B", "1078B"}},
		{name: "a unit starts no word", text: "5 seconds, 3 Bytes, 2 msec, 4 sec"},
		{name: "zero is zero seconds", text: "0 ms and 0µs", want: []string{"0s", "0s"}},
		{name: "bare decimals are ratios only where a ratio stands", text: "rate 0.54, p99 1.50, 2000 denied", ratios: true,
			want: []string{"0.54×", "1.5×"}},
		{name: "and otherwise nothing", text: "rate 0.54, p99 1.50"},
		{name: "a ratio by its name", text: "rate/echo 0.82, ratio=1.32, (B/A 1.08), per-run ratios 1.31, 0.93; run 1/3 0.5",
			want: []string{"0.82×", "1.32×", "1.08×", "1.31×", "0.93×"}},
		{name: "the micro sign either way", text: "25.3 μs", want: []string{"25.3µs"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var got []string
			for _, f := range figuresIn(tt.text, tt.ratios) {
				got = append(got, f.norm)
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestMarkdownTables(t *testing.T) {
	t.Parallel()
	text := "intro 3.1 s\n\n" +
		"| workload | ours (A) | B / A |\n" +
		"|---|---|---|\n" +
		"| chaos: 100 ChaosPods, 60 s | p99 72.6 ms, a \\| b | 1.29 |\n" +
		"| rs-backlog | `--timeout=20s` [x](#a-1-s) 5.58 s | written 0.98 |\n" +
		"\n" +
		"```\n| not | a table |\n|---|---|\n| 1 s | 2 s |\n```\n" +
		"| figure | ours |\n" +
		"| --- | --- |\n" +
		"| written / ceiling | 1.41 |\n"
	tables := markdownTables(text)
	require.Len(t, tables, 2)
	assert.Equal(t, 3, tables[0].line)
	assert.Equal(t, []string{"workload", "ours (A)", "B / A"}, tables[0].header)
	require.Len(t, tables[0].rows, 2)
	assert.Equal(t, []string{"chaos: 100 ChaosPods, 60 s", "p99 72.6 ms, a | b", "1.29"}, tables[0].rows[0].cells)
	var got []string
	for _, tb := range tables {
		for _, f := range tb.figures() {
			got = append(got, fmt.Sprintf("%d:%s", f.line, f.norm))
		}
	}
	assert.Equal(t, []string{"5:72.6ms", "5:1.29×", "6:5.58s", "6:0.98×", "15:1.41×"}, got,
		"the first column, code spans, link targets and fenced blocks hold no figure; a ratio column or row makes bare decimals ratios")
	prose := documentFigures(text)
	require.NotEmpty(t, prose)
	assert.Equal(t, figure{text: "3.1 s", norm: "3.1s", line: 1}, prose[0])
}

func TestSVGFigures(t *testing.T) {
	t.Parallel()
	svg := "<svg>\n<text x=\"1\">100</text>\n<circle><title>operator: all labeled, 20000 objects: 16.85 s</title></circle>\n" +
		"<text>heap &lt; 5 MiB</text><text>rss 68.1 MiB</text>\n</svg>\n"
	var got []string
	for _, f := range svgFigures(svg) {
		got = append(got, fmt.Sprintf("%d:%s", f.line, f.norm))
	}
	assert.Equal(t, []string{"3:16.85s", "4:68.1MiB"}, got)
}

func TestLogFigures(t *testing.T) {
	t.Parallel()
	log := "# bench: commit abc1234, 2026-12-07 08:00:00 UTC, AMD EPYC, 2 cores, go run ./bench --runs=3 --scale=0.5\n" +
		"bench: rs-backlog: run 1/3 A  n=2000  converge=3.61s  ratio=1.28\n" +
		"rs-backlog        A    n=2000  converge=3.66s  rate=19095/s  rss=47.8MiB  per-object=1074B  ratio=1.32\n" +
		"rs-backlog        B/A  converge=1.50  ratio=1.02\n" +
		"\n| workload | A | B | B/A |\n| --- | --- | --- | --- |\n| rs-backlog (n 2000) | converge 3.66s | converge 5.49s | converge 1.50, events 1.00 |\n"
	got := slices.Sorted(func(yield func(string) bool) {
		for k := range logFigures(log) {
			if !yield(k) {
				return
			}
		}
	})
	assert.Equal(t, []string{"0.5×", "1.02×", "1.28×", "1.32×", "1.5×", "1074B", "19095/s", "1×", "3.61s", "3.66s", "47.8MiB", "5.49s"}, got)
}

// A fixture of the sources: a section of docs/performance.md with its Run
// line and its log, and the quotes held to them.
const (
	fixtureLog = "# bench: commit abc1234-dirty, 2026-12-07 08:00:00 UTC, AMD EPYC, 2 cores, go run ./bench --runs=3\n" +
		"rs-backlog        A    n=2000  labeled=3.66s  written=5.37s\n" +
		"rs-backlog        B    n=2000  labeled=5.48s  written=5.49s\n" +
		"rs-backlog        B/A  labeled=1.50  written=1.02\n"
	fixturePerformance = "# Performance\n\nIntro.\n\n### A run\n\n" +
		"Run: commit `abc1234`, log [`bench/results/x.log`](../bench/results/x.log)\n\n" +
		"| workload | A | B | B/A |\n|---|---|---|---|\n" +
		"| rs-backlog: 2000 ReplicaSets | labeled 3.66 s, written 5.37 s | labeled 5.48 s, written 5.49 s | labeled 1.50, written 1.02 |\n\n" +
		"Labels 1.50× sooner than B, at 3.66 s.\n"
)

func fixtureSources(t *testing.T, perf string) figureSources {
	t.Helper()
	var s figureSources
	for _, table := range markdownTables(perf) {
		for _, f := range table.figures() {
			s.add(f.norm, fmt.Sprintf("docs/performance.md:%d", f.line))
		}
	}
	return s
}

func TestQuoteProblems(t *testing.T) {
	t.Parallel()
	sources := fixtureSources(t, fixturePerformance)
	tests := []struct {
		name string
		doc  string
		text string
		want []string
	}{
		{name: "quotes of the table", doc: "README.md", text: "Labeled in 3.66 s, 1.50× sooner than B (5.48 s); written 5.37 against 5.49 s."},
		{name: "the page's own prose quotes its table", doc: "docs/performance.md", text: fixturePerformance},
		{name: "a figure changed in the doc but not in its table", doc: "README.md", text: "line\nLabeled in 3.61 s.",
			want: []string{`README.md:2: 3.61s ("3.61 s") is no figure of docs/performance.md's tables, docs/scale.svg or a run's log (the nearest is 3.66s, docs/performance.md:11): quote the table's figure, or point at the table without a number`}},
		{name: "a figure derived by hand", doc: "README.md", text: "B is 0.67× as fast.",
			want: []string{`README.md:1: 0.67× ("0.67×") is no figure of docs/performance.md's tables, docs/scale.svg or a run's log (the nearest is 1.02×, docs/performance.md:11): quote the table's figure, or point at the table without a number`}},
		{name: "both ends of a range", doc: "README.md", text: "written 5.37–5.40 s",
			want: []string{`README.md:1: 5.4s ("5.37–5.40 s") is no figure of docs/performance.md's tables, docs/scale.svg or a run's log (the nearest is 5.37s, docs/performance.md:11): quote the table's figure, or point at the table without a number`}},
		{name: "a stale figure in the doc's own table", doc: "docs/deploying.md", text: "| objects | RSS |\n|---|---|\n| 2000 | 68.6 MiB |\n",
			want: []string{`docs/deploying.md:3: 68.6MiB ("68.6 MiB") is no figure of docs/performance.md's tables, docs/scale.svg or a run's log: quote the table's figure, or point at the table without a number`}},
		{name: "goals, settings and counts are not quotes", doc: "docs/deploying.md",
			text: "p99 ≤ 50 ms; `requests.memory: 64Mi`, limit 512Mi; 2000 ReplicaSets; `--gc-heap-floor=16MiB`; 256 KiB and 1.25 MB"},
		{name: "the allowance is the doc's own", doc: "README.md", text: "256 KiB",
			want: []string{`README.md:1: 256KiB ("256 KiB") is no figure of docs/performance.md's tables, docs/scale.svg or a run's log: quote the table's figure, or point at the table without a number`}},
		{name: "fenced blocks are examples", doc: "README.md", text: "```\n$ bench\nlabeled=9.99s\n```\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, quoteProblems(tt.doc, tt.text, sources))
		})
	}
}

func TestTableSourceProblems(t *testing.T) {
	t.Parallel()
	const doc = "docs/performance.md"
	commits := func(sha string) bool { return sha == "abc1234" }
	logs := func(files map[string]string) func(string) (string, bool) {
		return func(rel string) (string, bool) {
			s, ok := files[rel]
			return s, ok
		}
	}
	withLog := logs(map[string]string{"bench/results/x.log": fixtureLog})
	tests := []struct {
		name string
		text string
		read func(string) (string, bool)
		want []string
	}{
		{name: "every figure in the log", text: fixturePerformance, read: withLog},
		{name: "a table figure missing from its log", read: withLog,
			text: strings.Replace(fixturePerformance, "written 5.37 s", "written 5.31 s", 1),
			want: []string{`docs/performance.md:11: 5.31s ("5.31 s") is not in bench/results/x.log: copy the figure from the run's log`}},
		{name: "a ratio missing from its log", read: withLog,
			text: strings.Replace(fixturePerformance, "written 1.02", "written 0.98", 1),
			want: []string{`docs/performance.md:11: 0.98× ("0.98") is not in bench/results/x.log: copy the figure from the run's log`}},
		{name: "no Run line", read: withLog,
			text: strings.Replace(fixturePerformance, "Run: commit `abc1234`, log [`bench/results/x.log`](../bench/results/x.log)\n", "", 1),
			want: []string{"docs/performance.md:8: the table has no Run line above it in its section: write the commit it ran at and its committed log, as " + runLineExample}},
		{name: "the Run line of another section does not count", read: withLog,
			text: strings.Replace(fixturePerformance, "\n\n| workload", "\n\n### Another run\n\n| workload", 1),
			want: []string{"docs/performance.md:11: the table has no Run line above it in its section: write the commit it ran at and its committed log, as " + runLineExample}},
		{name: "a Run line not in the form", read: withLog,
			text: strings.Replace(fixturePerformance, "(../bench/results/x.log)", "(bench/results/x.log)", 1),
			want: []string{"docs/performance.md:7: the Run line is not in the form " + runLineExample + " (the link is the log's path from docs)"}},
		{name: "a commit not in history", read: withLog,
			text: strings.Replace(fixturePerformance, "`abc1234`", "`fff1234`", 1),
			want: []string{
				"docs/performance.md:7: commit fff1234 is not in git history",
				"docs/performance.md:7: commit fff1234, but bench/results/x.log ran at abc1234",
			}},
		{name: "a log not committed", read: logs(nil), text: fixturePerformance,
			want: []string{"docs/performance.md:7: the log bench/results/x.log is not in the repository: commit the run's output there"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, tableSourceProblems(doc, tt.text, commits, tt.read))
		})
	}
}

// The Run line of the doc comment above is in the form the rule reads.
func TestRunLineExampleIsInTheForm(t *testing.T) {
	t.Parallel()
	r, ok := parseRunLine("docs/performance.md", 1, runLineExample)
	require.True(t, ok)
	assert.Equal(t, runLine{line: 1, commit: "abc1234", log: "bench/results/2026-12-07-ab.log"}, r)
}
