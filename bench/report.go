package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"
)

// A run's log is the source of the tables in docs/performance.md: its
// header says what ran where, and its closing table holds the medians in
// the figures' own spelling, so a table pasted from it matches the log
// verbatim (test/docs holds each table's figures to its log).

// runHeader is what a log says about the run before any figure.
type runHeader struct {
	commit  string // short HEAD, -dirty with uncommitted changes, or unknown
	when    time.Time
	machine string // CPU model and core count
	command string
}

func (h runHeader) String() string {
	return fmt.Sprintf("# bench: commit %s, %s, %s, %s",
		h.commit, h.when.UTC().Format("2006-01-02 15:04:05 UTC"), h.machine, h.command)
}

// headerOf describes this run of command on this machine, now.
func headerOf(command string) runHeader {
	return runHeader{commit: gitCommit(), when: time.Now(), machine: machine(), command: command}
}

// gitCommit is HEAD's short hash, with -dirty when tracked files differ
// from it; "unknown" outside a repository or without git.
func gitCommit() string {
	out, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "unknown"
	}
	commit := strings.TrimSpace(string(out))
	status, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output()
	if err == nil && strings.TrimSpace(string(status)) != "" {
		commit += "-dirty"
	}
	return commit
}

// machine is the CPU model from /proc/cpuinfo and the cores this process
// may use.
func machine() string {
	model := runtime.GOARCH
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		model = cpuModel(bufio.NewScanner(f), model)
		_ = f.Close()
	}
	return fmt.Sprintf("%s, %d cores", model, runtime.NumCPU())
}

// cpuModel is the first "model name" of a /proc/cpuinfo, or fallback.
func cpuModel(s *bufio.Scanner, fallback string) string {
	for s.Scan() {
		key, value, ok := strings.Cut(s.Text(), ":")
		if ok && strings.TrimSpace(key) == "model name" && strings.TrimSpace(value) != "" {
			return strings.TrimSpace(value)
		}
	}
	return fallback
}

// report collects the medians of each job of a run, for the table that
// ends its log.
type report struct {
	labels []string // A, B, … in --operator, --ab order
	rows   []reportRow
}

type reportRow struct {
	workload string
	medians  []result // one per label
}

func (r *report) add(workload string, medians []result) {
	r.rows = append(r.rows, reportRow{workload, medians})
}

// markdown renders the medians as a table: a row per job, A's figures,
// then each other binary's figures and its ratios to A. The parameters
// (object counts) name the row, since the scale workload has one per size.
func (r *report) markdown() string {
	var b strings.Builder
	header := []string{"workload", r.labels[0]}
	for _, l := range r.labels[1:] {
		header = append(header, l, l+"/A")
	}
	writeRow(&b, header)
	sep := make([]string, len(header))
	for i := range sep {
		sep[i] = "---"
	}
	writeRow(&b, sep)
	for _, row := range r.rows {
		name := row.workload
		if params := figuresOf(row.medians[0], true); params != "" {
			name += " (" + params + ")"
		}
		cells := []string{name, figuresOf(row.medians[0], false)}
		for i := 1; i < len(row.medians); i++ {
			cells = append(cells, figuresOf(row.medians[i], false), figuresOf(ratioOfResults(row.medians[0], row.medians[i]), false))
		}
		writeRow(&b, cells)
	}
	return b.String()
}

// figuresOf lists a result's parameters, or its measured figures, as
// "name value, name value".
func figuresOf(r result, params bool) string {
	var parts []string
	for _, f := range r {
		if (f.unit == param) == params {
			parts = append(parts, f.name+" "+f.formatValue())
		}
	}
	return strings.Join(parts, ", ")
}

func writeRow(b *strings.Builder, cells []string) {
	b.WriteString("|")
	for _, c := range cells {
		b.WriteString(" " + strings.ReplaceAll(c, "|", `\|`) + " |")
	}
	b.WriteString("\n")
}
