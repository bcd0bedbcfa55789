package docs_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/hexagonal-operator/operator/internal/adapters/metrics"
)

// dashboardQuery is one PromQL expression of the Grafana dashboard, with
// the panel or variable it belongs to.
type dashboardQuery struct{ where, expr string }

// dashboardQueries reads every query of config/grafana/hexagonal-operator.json:
// the panels' targets (those of collapsed rows too) and the query
// variables, whose label_values(…) wrapper is Grafana's, not PromQL.
func dashboardQueries(t *testing.T) []dashboardQuery {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot(t), "config", "grafana", "hexagonal-operator.json"))
	require.NoError(t, err)
	type panel struct {
		Title   string `json:"title"`
		Targets []struct {
			Expr string `json:"expr"`
		} `json:"targets"`
		Panels []json.RawMessage `json:"panels"`
	}
	var dash struct {
		Panels     []json.RawMessage `json:"panels"`
		Templating struct {
			List []struct {
				Name       string `json:"name"`
				Type       string `json:"type"`
				Definition string `json:"definition"`
			} `json:"list"`
		} `json:"templating"`
	}
	require.NoError(t, json.Unmarshal(data, &dash))
	var queries []dashboardQuery
	var walk func(raw []json.RawMessage)
	walk = func(raw []json.RawMessage) {
		for _, r := range raw {
			var p panel
			require.NoError(t, json.Unmarshal(r, &p))
			for _, tg := range p.Targets {
				queries = append(queries, dashboardQuery{"panel " + p.Title, tg.Expr})
			}
			walk(p.Panels)
		}
	}
	walk(dash.Panels)
	for _, v := range dash.Templating.List {
		if v.Type == "query" {
			queries = append(queries, dashboardQuery{"variable " + v.Name, grafanaQueryExpr(v.Definition)})
		}
	}
	require.NotEmpty(t, queries, "the dashboard has queries")
	return queries
}

// grafanaQueryExpr unwraps a query variable's label_values(expr, label) or
// query_result(expr) into the PromQL inside; label_values(label) has none.
func grafanaQueryExpr(def string) string {
	def = strings.TrimSpace(def)
	if inner, ok := strings.CutPrefix(def, "query_result("); ok {
		return strings.TrimSuffix(inner, ")")
	}
	inner, ok := strings.CutPrefix(def, "label_values(")
	if !ok {
		return def
	}
	// The label is the last argument: after the last comma outside the
	// selector, when there are two.
	inner = strings.TrimSuffix(inner, ")")
	if i := strings.LastIndex(inner, ","); i >= 0 && !strings.ContainsAny(inner[i:], `}"`) {
		return strings.TrimSpace(inner[:i])
	}
	return ""
}

// exportedMetrics are the series names the operator exports: those
// docs/reference.md#metrics lists (a histogram's as name_bucket, _sum and
// _count; TestReferenceNamesEveryMetric holds the list to the code) and
// those of the Go and process collectors its registry starts with.
func exportedMetrics(t *testing.T) map[string]bool {
	t.Helper()
	_, section, ok := strings.Cut(reference(t), "\n## Metrics\n")
	require.True(t, ok, "docs/reference.md has a Metrics section")
	section, _, _ = strings.Cut(section, "\n## ")
	names := documentedMetrics(section)
	require.Greater(t, len(names), 20, "the metric tables of docs/reference.md were read")

	reg, err := metrics.NewRegistry()
	require.NoError(t, err)
	families, err := reg.Gather()
	require.NoError(t, err)
	for _, f := range families {
		names[f.GetName()] = true
	}
	return names
}

// documentedMetrics reads the backticked names of the first cell of each
// table row; a row whose description says histogram adds each name's
// _bucket, _sum and _count series.
func documentedMetrics(section string) map[string]bool {
	names := map[string]bool{}
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 3 || !strings.HasPrefix(line, "| `") {
			continue
		}
		histogram := strings.Contains(strings.Join(cells[2:], "|"), "histogram")
		for _, m := range regexp.MustCompile("`([a-z_:][a-z0-9_:]*)`").FindAllStringSubmatch(cells[1], -1) {
			names[m[1]] = true
			if histogram {
				for _, suffix := range []string{"_bucket", "_sum", "_count"} {
					names[m[1]+suffix] = true
				}
			}
		}
	}
	return names
}

func TestDocumentedMetricsReadsTheTables(t *testing.T) {
	t.Parallel()
	section := "Metrics keep `controller_runtime_x` names:\n\n| metric | labels | what |\n|---|---|---|\n" +
		"| `a_total` / `b` | `controller` | counts, not a `c` |\n" +
		"| `d_seconds` | `webhook` | a latency histogram |\n"
	assert.Equal(t, map[string]bool{"a_total": true, "b": true, "d_seconds": true, "d_seconds_bucket": true, "d_seconds_sum": true, "d_seconds_count": true},
		documentedMetrics(section))
}

// Every metric the dashboard and the alerts query is one the operator
// exports. `up` is Prometheus's own. test/e2e's
// TestAlertAndDashboardMetricsAreExported checks the same names against
// a running operator's /metrics.
func TestDashboardAndAlertsQueryExportedMetrics(t *testing.T) {
	t.Parallel()
	exported := exportedMetrics(t)
	queries := dashboardQueries(t)
	for _, r := range alertRules(t, filepath.Join(repoRoot(t), "config", "prometheus", "alerts.yaml")) {
		queries = append(queries, dashboardQuery{"alert " + r.Alert, r.Expr})
	}
	for _, problem := range unexportedQueries(queries, exported) {
		t.Error(problem)
	}
}

func TestUnexportedQueriesFindsThem(t *testing.T) {
	t.Parallel()
	exported := map[string]bool{"a_total": true, "b_seconds_bucket": true}
	tests := []struct {
		name, expr string
		want       []string
	}{
		{"exported", `sum by (b) (rate(a_total{job="j"}[5m])) / histogram_quantile(0.9, b_seconds_bucket)`, nil},
		{"up is Prometheus's", `absent(up{job="j"} == 1)`, nil},
		{"a misspelled name", `rate(a_totl[5m])`, []string{"panel p queries a_totl, which the operator does not export (docs/reference.md#metrics): rate(a_totl[5m])"}},
		{"a histogram without its suffix", `b_seconds > 1`, []string{"panel p queries b_seconds, which the operator does not export (docs/reference.md#metrics): b_seconds > 1"}},
		{"no metric at all", `vector(1)`, []string{"panel p queries no metric: vector(1)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, unexportedQueries([]dashboardQuery{{"panel p", tt.expr}}, exported))
		})
	}
}

// unexportedQueries lists the queries that name a metric the operator
// does not export, or none at all.
func unexportedQueries(queries []dashboardQuery, exported map[string]bool) []string {
	var problems []string
	for _, q := range queries {
		names := promqlMetricNames(q.expr)
		if len(names) == 0 {
			problems = append(problems, fmt.Sprintf("%s queries no metric: %s", q.where, q.expr))
		}
		for _, name := range names {
			if name != "up" && !exported[name] {
				problems = append(problems, fmt.Sprintf("%s queries %s, which the operator does not export (docs/reference.md#metrics): %s", q.where, name, q.expr))
			}
		}
	}
	return problems
}

// The dashboard shows what an operator of the operator looks at first, and
// every signal an alert fires on.
func TestDashboardCoversTheSignals(t *testing.T) {
	t.Parallel()
	shown := map[string]bool{}
	for _, q := range dashboardQueries(t) {
		if strings.HasPrefix(q.where, "panel ") {
			for _, name := range promqlMetricNames(q.expr) {
				shown[name] = true
			}
		}
	}
	for signal, metric := range map[string]string{
		"reconcile rate":       "controller_runtime_reconcile_total",
		"reconcile errors":     "controller_runtime_reconcile_errors_total",
		"reconcile latency":    "controller_runtime_reconcile_time_seconds_bucket",
		"work queue depth":     "workqueue_depth",
		"work queue latency":   "workqueue_queue_duration_seconds_bucket",
		"webhook latency":      "controller_runtime_webhook_latency_seconds_bucket",
		"webhook refusals":     "operator_webhook_requests_rejected_total",
		"leader":               "leader_election_master_status",
		"certificate expiry":   "operator_certificate_expiry_timestamp_seconds",
		"Events dropped":       "operator_events_dropped_total",
		"memory":               "process_resident_memory_bytes",
		"API server reachable": "operator_apiserver_reachable",
	} {
		assert.True(t, shown[metric], "no panel shows the %s (%s)", signal, metric)
	}
	for _, r := range alertRules(t, filepath.Join(repoRoot(t), "config", "prometheus", "alerts.yaml")) {
		for _, name := range promqlMetricNames(r.Expr) {
			assert.True(t, name == "up" || shown[name], "alert %s fires on %s, which no panel shows", r.Alert, name)
		}
	}
}

// Every panel selects the job config/prometheus's ServiceMonitor gives the
// operator (as the alerts do) and the namespace chosen in the dashboard,
// so that another controller-runtime operator beside it never adds to its
// curves; and the namespace variable lists the operator's namespaces.
func TestDashboardSelectsTheOperatorsJob(t *testing.T) {
	t.Parallel()
	selector := regexp.MustCompile(`\b[a-z_:][a-z0-9_:]*\{([^}]*)\}`)
	for _, q := range dashboardQueries(t) {
		found := selector.FindAllStringSubmatch(q.expr, -1)
		assert.NotEmpty(t, found, "%s selects no series by label: %s", q.where, q.expr)
		for _, m := range found {
			assert.Contains(t, m[1], `job="hexagonal-operator"`, "%s: %s", q.where, q.expr)
			if strings.HasPrefix(q.where, "panel ") {
				assert.Contains(t, m[1], `namespace="$namespace"`, "%s: %s", q.where, q.expr)
			}
		}
	}
}

// promtool parses every query of the dashboard, written as recording rules
// (Grafana's $__ intervals as 5m), so that a query Prometheus would refuse
// fails here rather than as an empty panel.
func TestPromtoolParsesTheDashboardQueries(t *testing.T) {
	t.Parallel()
	interval := regexp.MustCompile(`\$__(?:rate_interval|interval|range)\b|\$\{__(?:rate_interval|interval|range)\}`)
	var rules []map[string]string
	for i, q := range dashboardQueries(t) {
		rules = append(rules, map[string]string{
			"record": fmt.Sprintf("dashboard:query_%d", i),
			"expr":   interval.ReplaceAllString(q.expr, "5m"),
		})
	}
	data, err := yaml.Marshal(map[string]any{"groups": []any{map[string]any{"name": "dashboard", "rules": rules}}})
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "dashboard.rules.yaml"), data, 0o600))
	out, err := promtool(t, dir, "check", "rules", "dashboard.rules.yaml")
	require.NoError(t, err, "promtool check rules on the dashboard's queries:\n%s", out)
}

func TestPromqlMetricNames(t *testing.T) {
	t.Parallel()
	tests := []struct {
		expr string
		want []string
	}{
		{`up`, []string{"up"}},
		{`sum by (controller, result) (rate(controller_runtime_reconcile_total{job="x", namespace="$namespace"}[5m]))`,
			[]string{"controller_runtime_reconcile_total"}},
		{`sum(rate(a_total[5m])) by (le) / ignoring(code) group_left(pod) b_total offset 1h`, []string{"a_total", "b_total"}},
		{`histogram_quantile(0.99, sum without (pod) (rate(x_bucket{le!="+Inf"}[$__rate_interval])))`, []string{"x_bucket"}},
		{`min by (use) (c_seconds{job="j"}) - time() < 7 * 24 * 3600`, []string{"c_seconds"}},
		{`absent(up{job="j"} == 1) and on (job) d > bool 1e3`, []string{"up", "d"}},
		{`label_replace(e, "dst", "$1", "src", "(.*)") unless F`, []string{"e", "F"}},
		{`rate(g[5m:30s] @ start()) or topk(5, h) # a comment naming i`, []string{"g", "h"}},
		{`x == NaN or Inf > y`, []string{"x", "y"}},
		{`a + a`, []string{"a"}},
		{`vector(1)`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, promqlMetricNames(tt.expr))
		})
	}
}

func TestGrafanaQueryExpr(t *testing.T) {
	t.Parallel()
	assert.Equal(t, `a{job="x"}`, grafanaQueryExpr(`label_values(a{job="x"}, namespace)`))
	assert.Equal(t, `a{job="x, y"}`, grafanaQueryExpr(`label_values(a{job="x, y"}, pod)`))
	assert.Equal(t, "", grafanaQueryExpr(`label_values(namespace)`))
	assert.Equal(t, `sum by (pod) (b)`, grafanaQueryExpr(`query_result(sum by (pod) (b))`))
	assert.Equal(t, `c`, grafanaQueryExpr(`c`))
}

// promqlKeywords are PromQL's words that are no metric: binary and set
// operators, modifiers, aggregations (written without parentheses before
// a by clause) and the float literals.
var promqlKeywords = []string{
	"and", "or", "unless", "atan2", "bool", "offset", "by", "without", "on", "ignoring", "group_left", "group_right",
	"sum", "min", "max", "avg", "group", "stddev", "stdvar", "count", "count_values", "bottomk", "topk", "quantile",
	"limitk", "limit_ratio", "inf", "nan",
}

// labelLists are the keywords followed by a parenthesized list of label
// names.
var labelLists = []string{"by", "without", "on", "ignoring", "group_left", "group_right"}

// promqlMetricNames lists, once each and in order, the metric names a
// PromQL expression selects: the identifiers outside strings, label
// matchers ({…}), ranges ([…]) and comments that are neither a keyword,
// nor a function (followed by "("), nor in a by/on/… label list, nor a
// Grafana variable ($name). A name given only as {__name__="…"} is not
// seen. The operator's module does not depend on Prometheus's own parser,
// and this is all the metric checks need.
func promqlMetricNames(expr string) []string {
	var names []string
	braces, brackets := 0, 0
	isIdent := func(c byte, first bool) bool {
		return c == '_' || c == ':' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || !first && c >= '0' && c <= '9'
	}
	nextNonSpace := func(i int) int {
		for i < len(expr) && strings.ContainsRune(" \t\r\n", rune(expr[i])) {
			i++
		}
		return i
	}
	for i := 0; i < len(expr); {
		c := expr[i]
		switch {
		case c == '"' || c == '\'' || c == '`':
			i++
			for i < len(expr) && expr[i] != c {
				if expr[i] == '\\' && c != '`' {
					i++
				}
				i++
			}
			i++
		case c == '#':
			for i < len(expr) && expr[i] != '\n' {
				i++
			}
		case c == '{':
			braces++
			i++
		case c == '}':
			braces--
			i++
		case c == '[':
			brackets++
			i++
		case c == ']':
			brackets--
			i++
		case c == '$':
			// A Grafana variable: $name or ${name}.
			i++
			if i < len(expr) && expr[i] == '{' {
				for i < len(expr) && expr[i] != '}' {
					i++
				}
				i++
			}
			for i < len(expr) && isIdent(expr[i], false) {
				i++
			}
		case c >= '0' && c <= '9' || c == '.':
			// A number or a duration: 0.99, 1e3, 0x1f, 5m, 1h30m.
			for i < len(expr) && (isIdent(expr[i], false) || expr[i] == '.') {
				i++
			}
		case isIdent(c, true):
			start := i
			for i < len(expr) && isIdent(expr[i], false) {
				i++
			}
			word := expr[start:i]
			if braces > 0 || brackets > 0 {
				continue // a label name, or a unit
			}
			next := nextNonSpace(i)
			lower := strings.ToLower(word)
			if slices.Contains(labelLists, lower) && next < len(expr) && expr[next] == '(' {
				i = strings.IndexByte(expr[next:], ')') + next + 1
				if i == next { // no ")": the rest is the list
					i = len(expr)
				}
				continue
			}
			if slices.Contains(promqlKeywords, lower) || next < len(expr) && expr[next] == '(' {
				continue
			}
			if !slices.Contains(names, word) {
				names = append(names, word)
			}
		default:
			i++
		}
	}
	return names
}
