package docs_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/hexagonal-operator/operator/test/controlplane"
	"github.com/hexagonal-operator/operator/test/operatortest"
)

// plainRulesFile is the name config/prometheus/alerts_test.yaml loads its
// rules from: the groups of alerts.yaml, which is a PrometheusRule object
// that promtool cannot read.
const plainRulesFile = "alerts.rules.yaml"

// ruleTests is a `promtool test rules` file, as far as these tests read it.
type ruleTests struct {
	RuleFiles []string `json:"rule_files"`
	Tests     []struct {
		Name           string          `json:"name"`
		AlertRuleTests []alertRuleTest `json:"alert_rule_test"`
	} `json:"tests"`
}

// alertRuleTest is one evaluation of an alert: firing with exp_alerts, or
// silent without.
type alertRuleTest struct {
	EvalTime  string `json:"eval_time"`
	Alertname string `json:"alertname"`
	ExpAlerts []struct {
		ExpLabels      map[string]string `json:"exp_labels"`
		ExpAnnotations map[string]string `json:"exp_annotations"`
	} `json:"exp_alerts"`
}

// promtoolBinary finds the promtool `make tools` unpacks into bin/. The
// rule checks are the only proof that the alerts fire, so a missing
// promtool fails the test rather than skipping it.
func promtoolBinary(t *testing.T) string {
	t.Helper()
	path, err := controlplane.Binary("promtool")
	require.NoError(t, err, "promtool checks config/prometheus/alerts.yaml: run `make tools` (hack/promtool.sh)")
	return path
}

// promtool runs promtool in dir and returns its output.
func promtool(t *testing.T, dir string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, promtoolBinary(t), args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// alertSpec reads the spec (the rule groups) of the PrometheusRule in
// config/prometheus/alerts.yaml.
func alertSpec(t *testing.T) map[string]any {
	t.Helper()
	return operatortest.PrometheusRuleSpec(t, filepath.Join(repoRoot(t), "config", "prometheus", "alerts.yaml"))
}

// writeRuleTest writes spec as a plain rules file beside a copy of
// config/prometheus/alerts_test.yaml in a new folder, and returns it.
func writeRuleTest(t *testing.T, spec map[string]any) string {
	t.Helper()
	dir := t.TempDir()
	rules, err := yaml.Marshal(spec)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, plainRulesFile), rules, 0o600))
	tests, err := os.ReadFile(filepath.Join(repoRoot(t), "config", "prometheus", "alerts_test.yaml"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "alerts_test.yaml"), tests, 0o600))
	return dir
}

// promtool accepts the alerts as Prometheus would load them, and every
// case of config/prometheus/alerts_test.yaml passes: each alert fires on
// its series once its `for:` has passed, with the labels and annotations
// the case expects, and stays silent on the others.
func TestPromtoolChecksAndTestsTheAlerts(t *testing.T) {
	t.Parallel()
	dir := writeRuleTest(t, alertSpec(t))
	out, err := promtool(t, dir, "check", "rules", plainRulesFile)
	require.NoError(t, err, "promtool check rules on the groups of config/prometheus/alerts.yaml:\n%s", out)
	out, err = promtool(t, dir, "test", "rules", "alerts_test.yaml")
	require.NoError(t, err, "promtool test rules config/prometheus/alerts_test.yaml:\n%s", out)
}

// A change to an alert that its cases do not describe fails them: promtool
// really evaluates the rules, and the cases hold each alert to its metric,
// job, threshold, `for:` and labels.
func TestPromtoolCatchesABrokenAlert(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, alert, field, from, to string
		failingStep                  string // "check" or "test"
	}{
		{"a misspelled function", "HexagonalOperatorReconcileErrors", "expr", "(rate(controller_runtime_reconcile_errors_total", "(rates(controller_runtime_reconcile_errors_total", "check"},
		{"a renamed metric", "HexagonalOperatorAPIServerUnreachable", "expr", "operator_apiserver_reachable", "operator_apiserver_up", "test"},
		{"another job", "HexagonalOperatorEventsDropped", "expr", `job="hexagonal-operator"`, `job="hexagonal-operator-metrics"`, "test"},
		{"another threshold", "HexagonalOperatorWebhookSlow", "expr", ") > 1", ") > 5", "test"},
		{"a longer for", "HexagonalOperatorReconcileErrors", "for", "15m", "20m", "test"},
		{"a shorter for", "HexagonalOperatorNoLeader", "for", "5m", "4m", "test"},
		{"another severity", "HexagonalOperatorDown", "severity", "critical", "warning", "test"},
		{"a label dropped by the aggregation", "HexagonalOperatorWorkQueueGrowing", "expr", "sum by (namespace, name) (workqueue_depth", "sum by (name) (workqueue_depth", "test"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			spec := alertSpec(t)
			require.NoError(t, mutateAlert(spec, tt.alert, tt.field, tt.from, tt.to))
			dir := writeRuleTest(t, spec)
			out, err := promtool(t, dir, "check", "rules", plainRulesFile)
			if tt.failingStep == "check" {
				require.Error(t, err, "promtool check rules accepts the broken rule:\n%s", out)
				assert.Contains(t, out, tt.alert, "promtool names the broken rule")
				return
			}
			require.NoError(t, err, "promtool check rules:\n%s", out)
			out, err = promtool(t, dir, "test", "rules", "alerts_test.yaml")
			require.Error(t, err, "the cases pass with the broken rule:\n%s", out)
			assert.Contains(t, out, "alertname: "+tt.alert, "promtool names the failing alert")
		})
	}
}

// mutateAlert replaces from with to in one field of the named alert of a
// PrometheusRule spec: expr, for, or a label. It fails when the text is not
// there, so that a case of the table cannot go on passing without testing
// anything.
func mutateAlert(spec map[string]any, alert, field, from, to string) error {
	groups, _ := spec["groups"].([]any)
	for _, g := range groups {
		rules, _ := g.(map[string]any)["rules"].([]any)
		for _, r := range rules {
			rule := r.(map[string]any)
			if rule["alert"] != alert {
				continue
			}
			target := rule
			if field != "expr" && field != "for" {
				target, _ = rule["labels"].(map[string]any)
			}
			value, _ := target[field].(string)
			if !strings.Contains(value, from) {
				return fmt.Errorf("alert %s: %s %q does not contain %q", alert, field, value, from)
			}
			target[field] = strings.Replace(value, from, to, 1)
			return nil
		}
	}
	return fmt.Errorf("no alert %s", alert)
}

// Every alert of config/prometheus/alerts.yaml has a case where it fires
// and one where it stays silent, so a new alert without cases fails here.
func TestPromtoolCasesCoverEveryAlert(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	rules := alertRules(t, filepath.Join(root, "config", "prometheus", "alerts.yaml"))
	data, err := os.ReadFile(filepath.Join(root, "config", "prometheus", "alerts_test.yaml"))
	require.NoError(t, err)
	var tests ruleTests
	require.NoError(t, yaml.Unmarshal(data, &tests))
	assert.Equal(t, []string{plainRulesFile}, tests.RuleFiles, "config/prometheus/alerts_test.yaml loads the rules promtool_test.go extracts")
	assert.Empty(t, ruleTestGaps(rules, tests))

	// The case file is no resource of the kit: Prometheus never loads it.
	data, err = os.ReadFile(filepath.Join(root, "config", "prometheus", "kustomization.yaml"))
	require.NoError(t, err)
	var kustomization struct {
		Resources []string `json:"resources"`
	}
	require.NoError(t, yaml.Unmarshal(data, &kustomization))
	assert.Contains(t, kustomization.Resources, "alerts.yaml")
	assert.NotContains(t, kustomization.Resources, "alerts_test.yaml")
}

func TestRuleTestGapsFindsThem(t *testing.T) {
	t.Parallel()
	rules := []alertRule{{Alert: "OpDown"}, {Alert: "OpSlow"}}
	firing := func(alert string) string {
		return "  - alertname: " + alert + "\n    eval_time: 10m\n    exp_alerts:\n    - exp_labels: {severity: critical}\n" +
			"      exp_annotations: {summary: s, description: d, runbook_url: u}\n"
	}
	silent := func(alert string) string { return "  - alertname: " + alert + "\n    eval_time: 1m\n" }
	file := func(cases ...string) string {
		return "rule_files: [r.yaml]\ntests:\n- name: t\n  alert_rule_test:\n" + strings.Join(cases, "")
	}
	tests := []struct {
		name, file string
		want       []string
	}{
		{"each fires and stays silent", file(firing("OpDown"), silent("OpDown"), firing("OpSlow"), silent("OpSlow")), nil},
		{"no case", file(firing("OpDown"), silent("OpDown")), []string{
			"alert OpSlow: no case where it fires", "alert OpSlow: no case where it stays silent"}},
		{"never silent", file(firing("OpDown"), silent("OpDown"), firing("OpSlow")), []string{
			"alert OpSlow: no case where it stays silent"}},
		{"never fires", file(firing("OpDown"), silent("OpDown"), silent("OpSlow")), []string{
			"alert OpSlow: no case where it fires"}},
		{"an alert that is gone", file(firing("OpDown"), silent("OpDown"), firing("OpSlow"), silent("OpSlow"), silent("OpGone")), []string{
			"test t at 1m: no alert OpGone"}},
		{"a firing case without the severity and runbook", file(firing("OpDown"), silent("OpDown"), silent("OpSlow"),
			"  - alertname: OpSlow\n    eval_time: 5m\n    exp_alerts:\n    - exp_labels: {pod: p}\n      exp_annotations: {summary: s, description: d}\n"), []string{
			`test t at 5m: alert OpSlow: exp_labels lack "severity"`,
			`test t at 5m: alert OpSlow: exp_annotations lack "runbook_url"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var parsed ruleTests
			require.NoError(t, yaml.Unmarshal([]byte(tt.file), &parsed))
			assert.Equal(t, tt.want, ruleTestGaps(rules, parsed))
		})
	}
}

// ruleTestGaps lists the alerts without a firing case or without a silent
// one, the cases of alerts that do not exist, and the firing cases that
// do not expect the severity label and the summary, description and
// runbook_url annotations every alert has.
func ruleTestGaps(rules []alertRule, tests ruleTests) []string {
	var problems []string
	fires, silent := map[string]bool{}, map[string]bool{}
	for _, tc := range tests.Tests {
		for _, c := range tc.AlertRuleTests {
			where := fmt.Sprintf("test %s at %s", tc.Name, c.EvalTime)
			if !slices.ContainsFunc(rules, func(r alertRule) bool { return r.Alert == c.Alertname }) {
				problems = append(problems, where+": no alert "+c.Alertname)
				continue
			}
			if len(c.ExpAlerts) == 0 {
				silent[c.Alertname] = true
				continue
			}
			fires[c.Alertname] = true
			for _, a := range c.ExpAlerts {
				if _, ok := a.ExpLabels["severity"]; !ok {
					problems = append(problems, fmt.Sprintf("%s: alert %s: exp_labels lack %q", where, c.Alertname, "severity"))
				}
				for _, key := range []string{"summary", "description", "runbook_url"} {
					if _, ok := a.ExpAnnotations[key]; !ok {
						problems = append(problems, fmt.Sprintf("%s: alert %s: exp_annotations lack %q", where, c.Alertname, key))
					}
				}
			}
		}
	}
	for _, r := range rules {
		if !fires[r.Alert] {
			problems = append(problems, "alert "+r.Alert+": no case where it fires")
		}
		if !silent[r.Alert] {
			problems = append(problems, "alert "+r.Alert+": no case where it stays silent")
		}
	}
	return problems
}
