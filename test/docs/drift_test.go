package docs_test

import (
	"bytes"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/hexagonal-operator/operator/internal/adapters/webhook"
	"github.com/hexagonal-operator/operator/internal/config"
)

// Figures in prose drift from the code they describe; these tests read the
// figures back and compare them with their source.

// notebooks record measurements taken at other settings than the
// defaults, each with its date and command; their figures are history,
// not claims about the defaults.
var notebooks = []string{"docs/performance.md"}

// workerDefaults maps each controller to its default worker count, from
// the --<controller>-workers flags as the binary prints them.
func workerDefaults(t *testing.T) map[string]int {
	t.Helper()
	var usage bytes.Buffer
	config.Usage(&usage)
	workers := map[string]int{}
	for flag, value := range flagDefaults(usage.String()) {
		if controller, ok := strings.CutSuffix(flag, "-workers"); ok {
			n, err := strconv.Atoi(value)
			require.NoError(t, err, "--%s has a numeric default", flag)
			workers[controller] = n
		}
	}
	require.Len(t, workers, 2, "the usage text gives --replicaset-workers and --chaospod-workers: %s", usage.String())
	return workers
}

// A worker count that a page gives for a controller, in digits or in
// words, is that controller's default.
func TestDocsGiveTheDefaultWorkerCounts(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	defaults := workerDefaults(t)
	for _, doc := range docFiles(t, root) {
		if slices.Contains(notebooks, doc) {
			continue
		}
		for _, problem := range workerCountProblems(doc, readDoc(t, doc), defaults) {
			t.Error(problem)
		}
	}
}

func TestWorkerCountProblemsCatchesAStaleCount(t *testing.T) {
	t.Parallel()
	defaults := map[string]int{"replicaset": 16, "chaospod": 128}
	tests := []struct {
		name string
		text string
		want []string
	}{
		{name: "words, one controller per clause",
			text: "A ReplicaSet reconcile is one PATCH, so sixteen workers keep pace; ChaosPod stops\nfall due at once, so one hundred and twenty-eight workers send them."},
		{name: "a stale count in words, over a line break",
			text: "Worker defaults: a ReplicaSet reconcile is one PATCH, so sixteen workers keep pace; ChaosPod stops\nfall due at once, so thirty-two workers send their DELETEs.",
			want: []string{"docs/x.md:2: \"thirty-two workers\" for the chaospod controller, whose default is 128"}},
		{name: "digits before the controller's name",
			text: "It runs 8 ReplicaSet workers.",
			want: []string{"docs/x.md:1: \"8 ReplicaSet workers\" for the replicaset controller, whose default is 16"}},
		{name: "digits before the flag",
			text: "With 32 `--chaospod-workers` the stops go together.",
			want: []string{"docs/x.md:1: \"32 `--chaospod-workers`\" for the chaospod controller, whose default is 128"}},
		{name: "the flag's value",
			text: "line\n`--chaospod-workers` is 32: enough.\nAnd `--replicaset-workers=16` too.",
			want: []string{"docs/x.md:2: \"`--chaospod-workers` is 32\" for the chaospod controller, whose default is 128"}},
		{name: "the flag's default in parentheses",
			text: "`--replicaset-workers` (default 8) sets it.",
			want: []string{"docs/x.md:1: \"`--replicaset-workers` (default 8\" for the replicaset controller, whose default is 16"}},
		{name: "no controller named: not a claim about one", text: "two workers, each sending a review every 50 ms"},
		{name: "both named: ambiguous, left alone", text: "ReplicaSets and ChaosPods share 4 workers here."},
		{name: "a code block is an example, not a claim", text: "```sh\noperator --chaospod-workers=4\n```\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, workerCountProblems("docs/x.md", tt.text, defaults))
		})
	}
}

var (
	// flagCount: a --<controller>-workers flag followed by its value.
	flagCount = regexp.MustCompile("`?--([a-z0-9]+)-workers`?(?:=|\\s+is\\s+|\\s+defaults\\s+to\\s+|\\s*\\(default\\s+)`?([0-9]+|[a-z]+(?:[- ][a-z]+)*)")
	// countedWorkers: a count, then an optional controller name or
	// flag, then "workers" or the flag itself.
	countedWorkers = regexp.MustCompile("(?i)\\b([0-9]+|(?:(?:a|and|zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|hundred|thousand)[- ]?)+)\\s+(?:(chaospod|replicaset)\\s+workers\\b|workers\\b|`?--([a-z0-9]+)-workers\\b`?)")
	// clauseEnd splits prose into the clauses a count and a controller
	// must share.
	clauseEnd = regexp.MustCompile(`[;:]\s|\.\s|\n\s*\n`)
)

// workerCountProblems finds worker counts in a page's prose (fenced code
// is left out: it shows commands, not defaults) and names each that is
// not the default of the controller it is about. A count is about the
// controller named right before "workers" or by the flag; otherwise about
// the one controller its clause names, and about none when the clause
// names both or neither.
func workerCountProblems(doc, text string, defaults map[string]int) []string {
	prose := withoutFences(text)
	var problems []string
	report := func(at int, phrase, controller string, n int) {
		want, ok := defaults[controller]
		if !ok || n == want {
			return
		}
		line := strings.Count(prose[:at], "\n") + 1
		phrase = strings.Join(strings.Fields(phrase), " ")
		problems = append(problems, fmt.Sprintf("%s:%d: %q for the %s controller, whose default is %d", doc, line, phrase, controller, want))
	}
	for _, clause := range clauses(prose) {
		for _, m := range flagCount.FindAllStringSubmatchIndex(clause.text, -1) {
			if n, used, ok := parseLeadingCount(clause.text[m[4]:m[5]]); ok {
				report(clause.start+m[0], clause.text[m[0]:m[4]]+used, clause.text[m[2]:m[3]], n)
			}
		}
		for _, m := range countedWorkers.FindAllStringSubmatchIndex(clause.text, -1) {
			n, ok := parseCount(clause.text[m[2]:m[3]])
			if !ok {
				continue
			}
			controller := ""
			switch {
			case m[4] >= 0:
				controller = strings.ToLower(clause.text[m[4]:m[5]])
			case m[6] >= 0:
				controller = clause.text[m[6]:m[7]]
			default:
				controller = onlyController(clause.text, defaults)
			}
			report(clause.start+m[0], clause.text[m[0]:m[1]], controller, n)
		}
	}
	return problems
}

type clause struct {
	start int
	text  string
}

// clauses cuts prose at the ends of sentences and clauses.
func clauses(prose string) []clause {
	var out []clause
	start := 0
	for _, m := range clauseEnd.FindAllStringIndex(prose, -1) {
		out = append(out, clause{start, prose[start:m[0]]})
		start = m[1]
	}
	return append(out, clause{start, prose[start:]})
}

// onlyController is the one controller a clause names, or "".
func onlyController(text string, defaults map[string]int) string {
	lower := strings.ToLower(text)
	found := ""
	for controller := range defaults {
		if strings.Contains(lower, controller) {
			if found != "" {
				return ""
			}
			found = controller
		}
	}
	return found
}

// withoutFences blanks fenced code blocks, keeping the line count.
func withoutFences(text string) string {
	lines := strings.Split(text, "\n")
	fence := ""
	for i, line := range lines {
		trimmed := strings.TrimSpace(line)
		switch {
		case fence != "":
			if strings.HasPrefix(trimmed, fence) && strings.Trim(trimmed, fence[:1]) == "" {
				fence = ""
			}
			lines[i] = ""
		case fenceOf(trimmed) != "":
			fence = fenceOf(trimmed)
			lines[i] = ""
		}
	}
	return strings.Join(lines, "\n")
}

var numberWords = map[string]int{
	"zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
	"ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16,
	"seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50,
	"sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90,
}

// parseLeadingCount reads the count that the longest run of s's first
// words spells ("thirty-two by default" is 32), and returns those words.
func parseLeadingCount(s string) (int, string, bool) {
	words := strings.Fields(s)
	for i := len(words); i > 0; i-- {
		prefix := strings.Join(words[:i], " ")
		if n, ok := parseCount(prefix); ok {
			return n, prefix, true
		}
	}
	return 0, "", false
}

// parseCount reads a count in digits or in English words ("sixteen",
// "thirty-two", "one hundred and twenty-eight", "a thousand").
func parseCount(s string) (int, bool) {
	s = strings.ToLower(strings.TrimSpace(s))
	if n, err := strconv.Atoi(s); err == nil {
		return n, true
	}
	total, current, words := 0, 0, 0
	for _, w := range strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == '-' }) {
		switch w {
		case "and":
		case "a":
			current = max(current, 1)
		case "hundred":
			current = max(current, 1) * 100
		case "thousand":
			total += max(current, 1) * 1000
			current = 0
		default:
			n, ok := numberWords[w]
			if !ok {
				return 0, false
			}
			current += n
			words++
		}
	}
	if words == 0 && !strings.Contains(s, "hundred") && !strings.Contains(s, "thousand") {
		return 0, false
	}
	return total + current, true
}

func TestParseCount(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want int
		ok   bool
	}{
		{"16", 16, true}, {"sixteen", 16, true}, {"thirty-two", 32, true}, {"Thirty two", 32, true},
		{"one hundred and twenty-eight", 128, true}, {"a hundred", 100, true}, {"two thousand", 2000, true},
		{"and", 0, false}, {"many", 0, false}, {"a", 0, false},
	}
	for _, tt := range tests {
		n, ok := parseCount(tt.in)
		assert.Equal(t, tt.ok, ok, tt.in)
		assert.Equal(t, tt.want, n, tt.in)
	}
}

// buildFigureFiles state how long the first build of the test control
// plane takes.
var buildFigureFiles = []string{"README.md", "CONTRIBUTING.md", "Makefile", "test/tools/build.sh", "docs/testing.md", "docs/node.md"}

// Every "the first build … takes about N minutes" gives the same N: the
// README, the Makefile's help, the build script's own message and the
// guides.
func TestBuildTimeFiguresAgree(t *testing.T) {
	t.Parallel()
	figures := map[string][]int{}
	for _, f := range buildFigureFiles {
		figures[f] = buildMinutes(readDoc(t, f))
	}
	for _, f := range []string{"README.md", "Makefile", "test/tools/build.sh"} {
		assert.NotEmpty(t, figures[f], "%s says how long the first build takes", f)
	}
	assert.Empty(t, disagreements(figures))
}

func TestBuildMinutesAndDisagreements(t *testing.T) {
	t.Parallel()
	assert.Equal(t, []int{15}, buildMinutes("the first build takes\nabout 15 minutes on 2 cores"))
	assert.Equal(t, []int{15}, buildMinutes("`make test` (about 6 min warm) and the first `make tools` (about 15 min\ncold)"))
	assert.Empty(t, buildMinutes("first it waits. Then about 5 min pass"))
	assert.Empty(t, disagreements(map[string][]int{"a": {15}, "b": {15, 15}, "c": nil}))
	assert.Equal(t, []string{"b says 10 minutes, a says 15"}, disagreements(map[string][]int{"a": {15}, "b": {10}}))
}

// buildMinutes reads each "first … about N min(utes)" of one sentence.
func buildMinutes(text string) []int {
	flat := strings.Join(strings.Fields(text), " ")
	var out []int
	for _, m := range regexp.MustCompile(`(?i)\bfirst\b[^.;]{0,80}?\babout \**(\d+)\** min`).FindAllStringSubmatch(flat, -1) {
		n, _ := strconv.Atoi(m[1])
		out = append(out, n)
	}
	return out
}

// disagreements names each figure that differs from the first file's, in
// file order.
func disagreements(figures map[string][]int) []string {
	var problems []string
	first, firstFile := -1, ""
	for _, f := range slices.Sorted(maps.Keys(figures)) {
		for _, n := range figures[f] {
			switch {
			case first < 0:
				first, firstFile = n, f
			case n != first:
				problems = append(problems, fmt.Sprintf("%s says %d minutes, %s says %d", f, n, firstFile, first))
			}
		}
	}
	return problems
}

// kubeMinor is the Kubernetes minor version from which each API the
// manifests use is served at the version they use. The API groups of
// add-ons (cert-manager, the Prometheus Operator), kustomize's and the
// operator's own are not Kubernetes'.
var kubeMinor = map[string]int{
	"apps/v1 Deployment":                                               9,
	"apps/v1 ReplicaSet":                                               9,
	"policy/v1 PodDisruptionBudget":                                    21,
	"rbac.authorization.k8s.io/v1 ClusterRole":                         8,
	"rbac.authorization.k8s.io/v1 ClusterRoleBinding":                  8,
	"rbac.authorization.k8s.io/v1 Role":                                8,
	"rbac.authorization.k8s.io/v1 RoleBinding":                         8,
	"apiextensions.k8s.io/v1 CustomResourceDefinition":                 16,
	"admissionregistration.k8s.io/v1 MutatingWebhookConfiguration":     16,
	"admissionregistration.k8s.io/v1 ValidatingWebhookConfiguration":   16,
	"admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy":        30,
	"admissionregistration.k8s.io/v1 ValidatingAdmissionPolicyBinding": 30,
	"networking.k8s.io/v1 NetworkPolicy":                               7,
	"scheduling.k8s.io/v1 PriorityClass":                               14,
}

var notKubernetes = []string{"builtin", "kustomize.config.k8s.io/", "cert-manager.io/", "monitoring.coreos.com/", "chaosapps.metamagical.io/"}

// The README's minimum Kubernetes version is the newest API the manifests
// in config/ use, its tested version the one test/tools builds, and its Go
// version go.mod's.
func TestReadmeGivesTheVersionsTheCodeNeeds(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	readme := readDoc(t, "README.md")

	minimum, apis := 0, []string{}
	err := filepath.WalkDir(filepath.Join(root, "config"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".yaml") {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, part := range regexp.MustCompile(`(?m)^---\s*$`).Split(string(data), -1) {
			var head struct{ APIVersion, Kind string }
			if err := yaml.Unmarshal([]byte(part), &head); err != nil || head.APIVersion == "" || head.APIVersion == "v1" {
				continue // core v1 is served by every version
			}
			if slices.ContainsFunc(notKubernetes, func(p string) bool { return strings.HasPrefix(head.APIVersion, p) }) {
				continue
			}
			api := head.APIVersion + " " + head.Kind
			minor, ok := kubeMinor[api]
			if !assert.True(t, ok, "%s uses %s: add the Kubernetes version that serves it to kubeMinor", path, api) {
				continue
			}
			if minor > minimum {
				minimum, apis = minor, nil
			}
			if minor == minimum && !slices.Contains(apis, api) {
				apis = append(apis, api)
			}
		}
		return nil
	})
	require.NoError(t, err)
	want := fmt.Sprintf("Kubernetes ≥ 1.%d", minimum)
	assert.True(t, strings.Contains(readme, want), "README.md does not say %q, the minimum %v needs", want, apis)

	tools := readDoc(t, "test/tools/go.mod")
	tested := regexp.MustCompile(`(?m)^\s*k8s\.io/kubernetes (v1\.\d+\.\d+)$`).FindStringSubmatch(tools)
	require.NotNil(t, tested, "test/tools/go.mod pins k8s.io/kubernetes")
	want = "tested with Kubernetes " + tested[1]
	assert.True(t, strings.Contains(readme, want), "README.md does not say %q, the version test/tools builds", want)

	goVersion := regexp.MustCompile(`(?m)^go (\d+\.\d+)`).FindStringSubmatch(readDoc(t, "go.mod"))
	require.NotNil(t, goVersion)
	want = "Go ≥ " + goVersion[1]
	assert.True(t, strings.Contains(readme, want), "README.md does not say %q, go.mod's version", want)
}

// The pages that give the webhook server's budget give the defaults the
// server applies.
func TestDocsGiveTheWebhookBudget(t *testing.T) {
	t.Parallel()
	want := []string{
		fmt.Sprintf("%d MiB", webhook.DefaultMaxRequestBytes>>20),
		fmt.Sprintf("%d MiB", webhook.DefaultMaxBodyBytesInFlight>>20),
		strconv.Itoa(webhook.DefaultMaxRequestsInFlight),
	}
	for _, doc := range []string{"docs/reference.md", "docs/troubleshooting.md"} {
		text := strings.Join(strings.Fields(readDoc(t, doc)), " ")
		for _, w := range want {
			assert.True(t, strings.Contains(text, w), "%s does not give the webhook budget's %s", doc, w)
		}
	}
}
