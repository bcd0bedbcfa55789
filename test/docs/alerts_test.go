package docs_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/hexagonal-operator/operator/test/controlplane"
)

// alertRule is one rule of config/prometheus/alerts.yaml.
type alertRule struct {
	Alert       string            `json:"alert"`
	Expr        string            `json:"expr"`
	For         string            `json:"for"`
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
}

// alertRules reads the rules of a PrometheusRule manifest.
func alertRules(t *testing.T, path string) []alertRule {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var rule struct {
		Spec struct {
			Groups []struct {
				Rules []alertRule `json:"rules"`
			} `json:"groups"`
		} `json:"spec"`
	}
	require.NoError(t, yaml.Unmarshal(data, &rule))
	var rules []alertRule
	for _, g := range rule.Spec.Groups {
		rules = append(rules, g.Rules...)
	}
	require.NotEmpty(t, rules, "%s holds no alert", path)
	return rules
}

func alertNamesOf(rules []alertRule) []string {
	var names []string
	for _, r := range rules {
		names = append(names, r.Alert)
	}
	return names
}

// repoURL is the repository's web address, from go.mod's module path.
func repoURL(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot(t), "go.mod"))
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^module\s+(github\.com/\S+)$`).FindStringSubmatch(string(data))
	require.NotNil(t, m, "go.mod names a github.com module")
	return "https://" + m[1]
}

func readDoc(t *testing.T, rel string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot(t), filepath.FromSlash(rel)))
	require.NoError(t, err)
	return string(data)
}

// Every alert links its own entry of docs/troubleshooting.md, and the
// entry is there.
func TestEveryAlertHasARunbook(t *testing.T) {
	t.Parallel()
	rules := alertRules(t, filepath.Join(repoRoot(t), "config", "prometheus", "alerts.yaml"))
	anchors := headingAnchors(readDoc(t, "docs/troubleshooting.md"))
	assert.Empty(t, runbookProblems(rules, repoURL(t), anchors))
}

func TestRunbookProblemsCatchesABrokenLink(t *testing.T) {
	t.Parallel()
	const base = "https://github.com/o/r"
	link := func(anchor string) map[string]string {
		return map[string]string{"runbook_url": base + "/blob/main/docs/troubleshooting.md#" + anchor}
	}
	anchors := headingAnchors("# Troubleshooting\n\n## Alerts\n\n### OpDown\n\ntext\n\n```\n# OpSlow\n```\n")
	tests := []struct {
		name  string
		rules []alertRule
		want  []string
	}{
		{"linked and there", []alertRule{{Alert: "OpDown", Annotations: link("opdown")}}, nil},
		{"no runbook_url", []alertRule{{Alert: "OpDown"}},
			[]string{"alert OpDown: no runbook_url annotation"}},
		{"another anchor", []alertRule{{Alert: "OpDown", Annotations: link("alerts")}},
			[]string{"alert OpDown: runbook_url " + base + "/blob/main/docs/troubleshooting.md#alerts, want " + base + "/blob/main/docs/troubleshooting.md#opdown"}},
		{"another page", []alertRule{{Alert: "OpDown", Annotations: map[string]string{"runbook_url": base + "/blob/main/docs/reference.md#opdown"}}},
			[]string{"alert OpDown: runbook_url " + base + "/blob/main/docs/reference.md#opdown, want " + base + "/blob/main/docs/troubleshooting.md#opdown"}},
		{"no heading (a comment in a code block is none)", []alertRule{{Alert: "OpSlow", Annotations: link("opslow")}},
			[]string{"alert OpSlow: docs/troubleshooting.md has no heading with the anchor #opslow"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, runbookProblems(tt.rules, base, anchors))
		})
	}
}

// runbookProblems lists the rules whose runbook_url is not
// <repo>/blob/main/docs/troubleshooting.md#<alert in lower case>, or
// whose anchor is no heading of that page.
func runbookProblems(rules []alertRule, repo string, anchors []string) []string {
	var problems []string
	for _, r := range rules {
		anchor := strings.ToLower(r.Alert)
		want := repo + "/blob/main/docs/troubleshooting.md#" + anchor
		got, ok := r.Annotations["runbook_url"]
		switch {
		case !ok:
			problems = append(problems, "alert "+r.Alert+": no runbook_url annotation")
		case got != want:
			problems = append(problems, "alert "+r.Alert+": runbook_url "+got+", want "+want)
		case !slices.Contains(anchors, anchor):
			problems = append(problems, "alert "+r.Alert+": docs/troubleshooting.md has no heading with the anchor #"+anchor)
		}
	}
	return problems
}

// headingAnchors lists the anchors GitHub gives a markdown text's
// headings: lower case, punctuation dropped but hyphens and underscores,
// spaces as hyphens, and -1, -2 … after a repeated one. Fenced code
// blocks hold no headings.
func headingAnchors(text string) []string {
	var (
		anchors []string
		seen    = map[string]int{}
	)
	for _, line := range proseLines(text) {
		level := len(line) - len(strings.TrimLeft(line, "#"))
		if level == 0 || level > 6 || !strings.HasPrefix(line[level:], " ") {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(line[level:])) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		anchor := b.String()
		if n := seen[anchor]; n > 0 {
			seen[anchor]++
			anchor = fmt.Sprintf("%s-%d", anchor, n)
		} else {
			seen[anchor] = 1
		}
		anchors = append(anchors, anchor)
	}
	return anchors
}

// docs/deploying.md's monitoring section names exactly the alerts the
// file holds, and no page names an alert that is not there.
func TestDocsNameExactlyTheAlerts(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	alerts := alertNamesOf(alertRules(t, filepath.Join(root, "config", "prometheus", "alerts.yaml")))
	_, section, ok := strings.Cut(readDoc(t, "docs/deploying.md"), "### Observability")
	require.True(t, ok, "docs/deploying.md has its Observability section")
	section, _, _ = strings.Cut(section, "\n#")
	assert.ElementsMatch(t, alerts, alertMentions(section), "the alerts docs/deploying.md lists (Observability) and those of config/prometheus/alerts.yaml")
	for _, problem := range alertRowProblems(section, alertRules(t, filepath.Join(root, "config", "prometheus", "alerts.yaml"))) {
		t.Error("docs/deploying.md: " + problem)
	}
	for _, doc := range docFiles(t, root) {
		for _, a := range alertMentions(readDoc(t, doc)) {
			assert.Contains(t, alerts, a, "%s names an alert config/prometheus/alerts.yaml does not have", doc)
		}
	}
}

func TestAlertRowProblemsCatchesAStaleRow(t *testing.T) {
	t.Parallel()
	rules := []alertRule{{Alert: "OpDown", For: "5m", Labels: map[string]string{"severity": "critical"}}}
	tests := []struct {
		name, table string
		want        []string
	}{
		{"as the rule", "| `OpDown` | nothing scraped, for 5 min | critical |\n", nil},
		{"no row", "| `OpUp` | x | y |\n", []string{"alert OpDown: no row in the table"}},
		{"another duration", "| `OpDown` | nothing scraped, for 15 min | critical |\n", []string{"alert OpDown: the row does not say \"for 5 min\""}},
		{"another severity", "| `OpDown` | nothing scraped, for 5 min | warning |\n", []string{"alert OpDown: the row does not say \"critical\""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, alertRowProblems(tt.table, rules))
		})
	}
}

// alertRowProblems holds each rule's row of a markdown table (first cell
// the backticked alert name) to the rule's severity and, when it waits,
// its "for N min".
func alertRowProblems(table string, rules []alertRule) []string {
	var problems []string
	for _, r := range rules {
		var row string
		for _, line := range strings.Split(table, "\n") {
			if strings.HasPrefix(line, "| `"+r.Alert+"` |") {
				row = line
			}
		}
		if row == "" {
			problems = append(problems, "alert "+r.Alert+": no row in the table")
			continue
		}
		var want []string
		if m := regexp.MustCompile(`^(\d+)m$`).FindStringSubmatch(r.For); m != nil {
			want = append(want, "for "+m[1]+" min")
		}
		want = append(want, r.Labels["severity"])
		for _, w := range want {
			if !strings.Contains(row, w) {
				problems = append(problems, fmt.Sprintf("alert %s: the row does not say %q", r.Alert, w))
			}
		}
	}
	return problems
}

func TestAlertMentionsReadsNamesAndShortNames(t *testing.T) {
	t.Parallel()
	tests := []struct {
		text string
		want []string
	}{
		{"`HexagonalOperatorDown` and `…NoLeader`, again `HexagonalOperatorDown`", []string{"HexagonalOperatorDown", "HexagonalOperatorNoLeader"}},
		{"[HexagonalOperatorWebhookSlow](troubleshooting.md#hexagonaloperatorwebhookslow)", []string{"HexagonalOperatorWebhookSlow"}},
		{"the hexagonal operator, HexagonalOperator alone, …", nil},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, alertMentions(tt.text))
		})
	}
}

// alertMentions lists, once each and in order, the alert names a text
// gives: HexagonalOperatorX, or …X after a first full name.
func alertMentions(text string) []string {
	var names []string
	for _, m := range regexp.MustCompile(`(?:HexagonalOperator|…)([A-Z][A-Za-z0-9]+)`).FindAllStringSubmatch(text, -1) {
		if name := "HexagonalOperator" + m[1]; !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	return names
}

// The Prometheus kit and the Grafana dashboard, rendered with another
// namespace and name prefix (as config/default is in test/e2e's
// TestDeployElsewhere), keep no trace of the default prefix, and the
// alerts select the job the ServiceMonitor gives the metrics Service that
// config/default renders under that prefix.
func TestAlertsFollowTheNamePrefix(t *testing.T) {
	t.Parallel()
	const ns, prefix = "acme-ops", "acme-"
	config := filepath.Join(t.TempDir(), "config")
	require.NoError(t, os.CopyFS(config, os.DirFS(filepath.Join(repoRoot(t), "config"))))
	for _, dir := range []string{"default", "prometheus", "grafana"} {
		setNamespaceAndPrefix(t, filepath.Join(config, dir, "kustomization.yaml"), ns, prefix)
	}
	kit, err := controlplane.Manifests(filepath.Join(config, "prometheus"))
	require.NoError(t, err)
	dashboard, err := controlplane.Manifests(filepath.Join(config, "grafana"))
	require.NoError(t, err)
	require.NotEmpty(t, dashboard, "config/grafana renders the dashboard's ConfigMap")
	kit = append(kit, dashboard...)
	deployed, err := controlplane.Manifests(filepath.Join(config, "default"))
	require.NoError(t, err)

	var monitor *unstructured.Unstructured
	var rules []alertRule
	for _, o := range kit {
		data, err := json.Marshal(o.Object)
		require.NoError(t, err)
		assert.Empty(t, oldPrefix.FindAllString(string(data), -1), "%s %s keeps the default prefix or namespace", o.GetKind(), o.GetName())
		assert.Equal(t, ns, o.GetNamespace(), "%s %s", o.GetKind(), o.GetName())
		switch o.GetKind() {
		case "ServiceMonitor":
			monitor = o
		case "PrometheusRule":
			file := filepath.Join(t.TempDir(), "rule.json")
			require.NoError(t, os.WriteFile(file, data, 0o600))
			rules = alertRules(t, file)
		}
	}
	require.NotNil(t, monitor, "config/prometheus renders a ServiceMonitor")
	require.NotEmpty(t, rules, "config/prometheus renders a PrometheusRule")

	// The Service the ServiceMonitor selects, and the job it names it by.
	selector, _, _ := unstructured.NestedStringMap(monitor.Object, "spec", "selector", "matchLabels")
	jobLabel, _, _ := unstructured.NestedString(monitor.Object, "spec", "jobLabel")
	require.NotEmpty(t, jobLabel, "the ServiceMonitor takes the job from a label, not from the prefixed Service name")
	var jobs []string
	for _, o := range deployed {
		if o.GetKind() == "Service" && labelsMatch(o.GetLabels(), selector) {
			jobs = append(jobs, o.GetLabels()[jobLabel])
		}
	}
	require.Len(t, jobs, 1, "the ServiceMonitor selects one Service of config/default")
	require.NotEmpty(t, jobs[0], "the selected Service has the label %s", jobLabel)

	matcher := regexp.MustCompile(`\bjob\s*=~?\s*"([^"]*)"`)
	for _, r := range rules {
		found := matcher.FindAllStringSubmatch(r.Expr, -1)
		assert.NotEmpty(t, found, "alert %s selects the operator's job", r.Alert)
		for _, m := range found {
			assert.Equal(t, jobs[0], m[1], "alert %s selects the job the ServiceMonitor gives the metrics Service", r.Alert)
		}
	}
}

// oldPrefix finds the default prefix in a rendered object, with what
// surrounds it.
var oldPrefix = regexp.MustCompile(`[^"]{0,40}hexagonal-operator-[^"]{0,40}`)

// setNamespaceAndPrefix rewrites a kustomization's namespace and
// namePrefix, as a user installing elsewhere would.
func setNamespaceAndPrefix(t *testing.T, path, namespace, prefix string) {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	text := string(data)
	for old, repl := range map[string]string{
		"namespace: hexagonal-operator-system": "namespace: " + namespace,
		"namePrefix: hexagonal-operator-":      "namePrefix: " + prefix,
	} {
		require.Equal(t, 1, strings.Count(text, "\n"+old+"\n"), "%s sets %q once", path, old)
		text = strings.Replace(text, "\n"+old+"\n", "\n"+repl+"\n", 1)
	}
	require.NoError(t, os.WriteFile(path, []byte(text), 0o600))
}

func labelsMatch(labels, selector map[string]string) bool {
	if len(selector) == 0 {
		return false
	}
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// Every link to a heading of a page (page.md#anchor, or #anchor within
// one) names a heading that page has.
func TestLinksToHeadingsResolve(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	for _, doc := range docFiles(t, root) {
		for _, problem := range brokenAnchors(doc, readDoc(t, doc), func(rel string) (string, bool) {
			data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
			return string(data), err == nil
		}) {
			t.Error(problem)
		}
	}
}

func TestBrokenAnchorsFindsThem(t *testing.T) {
	t.Parallel()
	pages := map[string]string{"docs/b.md": "# B\n\n## Exit code 1\n"}
	read := func(rel string) (string, bool) { s, ok := pages[rel]; return s, ok }
	text := "# A\n\n## Here\n\n[ok](b.md#exit-code-1) [self](#here) [web](https://x.io/a.md#nope) `[code](b.md#nope)`\n" +
		"[gone](b.md#exit-code-2)\n[no page](c.md#x) [not here](#there)\n"
	assert.Equal(t, []string{
		"docs/a.md:6: b.md#exit-code-2: no such heading in docs/b.md",
		"docs/a.md:7: #there: no such heading in docs/a.md",
	}, brokenAnchors("docs/a.md", text, read))
}

// brokenAnchors lists the links of doc, outside code, whose anchor is no
// heading of the page they point at; pages that do not exist are the
// concern of missingPaths.
func brokenAnchors(doc, text string, read func(rel string) (string, bool)) []string {
	var problems []string
	prose := withoutFences(text)
	for i, line := range strings.Split(prose, "\n") {
		for _, m := range mdLink.FindAllStringSubmatch(codeSpan.ReplaceAllString(line, ""), -1) {
			target, anchor, ok := strings.Cut(m[1], "#")
			if !ok || strings.Contains(target, "://") {
				continue
			}
			page, body := doc, text
			if target != "" {
				page = path.Join(path.Dir(doc), target)
				if body, ok = read(page); !ok {
					continue
				}
			}
			if !slices.Contains(headingAnchors(body), anchor) {
				problems = append(problems, fmt.Sprintf("%s:%d: %s: no such heading in %s", doc, i+1, m[1], page))
			}
		}
	}
	return problems
}
