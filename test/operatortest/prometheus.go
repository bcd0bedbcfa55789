package operatortest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"
)

// PrometheusRuleSpec reads the PrometheusRule object in path (such as
// config/prometheus/alerts.yaml) and returns its spec. The spec is what a
// Prometheus rules file holds (its groups), which is how the Prometheus
// Operator hands the object to Prometheus; marshalled back to YAML it is a
// file that promtool and Prometheus load.
func PrometheusRuleSpec(t testing.TB, path string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var rule struct {
		Kind string         `json:"kind"`
		Spec map[string]any `json:"spec"`
	}
	require.NoError(t, yaml.Unmarshal(data, &rule))
	require.Equal(t, "PrometheusRule", rule.Kind, path)
	require.Contains(t, rule.Spec, "groups", "%s has spec.groups", path)
	return rule.Spec
}

// PrometheusRulesFile writes the spec of the PrometheusRule in path as a
// plain rules file in dir, named name, and returns the file's path.
func PrometheusRulesFile(t testing.TB, path, dir, name string) string {
	t.Helper()
	rules, err := yaml.Marshal(PrometheusRuleSpec(t, path))
	require.NoError(t, err)
	out := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(out, rules, 0o600))
	return out
}
