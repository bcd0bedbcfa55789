package e2e_test

import (
	"context"
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/hexagonal-operator/operator/test/controlplane"
	"github.com/hexagonal-operator/operator/test/operatorproc"
)

// metricName finds the operator's metric names in PromQL:
// controller-runtime's families, ours (operator_) and the Go and process
// collectors'. `up` and other series Prometheus makes itself are not the
// operator's to export.
var metricName = regexp.MustCompile(`\b(?:controller_runtime|workqueue|leader_election|rest_client|operator|process|go)_[a-zA-Z0-9_]+\b`)

// kitMetrics are the metric names the alerts and the dashboard query.
func kitMetrics(t *testing.T) map[string][]string {
	t.Helper()
	used := map[string][]string{} // name -> where
	add := func(expr, where string) {
		for _, m := range metricName.FindAllString(expr, -1) {
			if !slices.Contains(used[m], where) {
				used[m] = append(used[m], where)
			}
		}
	}
	rule := find(t, render(t, "config", "prometheus"), "PrometheusRule", "hexagonal-operator-alerts")
	groups, _, _ := unstructured.NestedSlice(rule.Object, "spec", "groups")
	for _, g := range groups {
		for _, r := range g.(map[string]any)["rules"].([]any) {
			r := r.(map[string]any)
			add(r["expr"].(string), "alert "+r["alert"].(string))
		}
	}
	data, err := os.ReadFile(repoPath(t, "config", "grafana", "hexagonal-operator.json"))
	require.NoError(t, err)
	var dash struct {
		Panels []struct {
			Title   string
			Targets []struct{ Expr string }
		}
		Templating struct {
			List []struct {
				Name       string
				Definition string
			}
		}
	}
	require.NoError(t, json.Unmarshal(data, &dash))
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			add(tg.Expr, "panel "+p.Title)
		}
	}
	for _, v := range dash.Templating.List {
		add(v.Definition, "variable "+v.Name)
	}
	return used
}

// exported reads the series names p's /metrics has; a histogram or summary
// family x is queried as x_bucket, x_sum and x_count.
func exported(t *testing.T, p *operatorproc.Process) map[string]bool {
	t.Helper()
	samples, err := p.Scrape()
	require.NoError(t, err)
	names := map[string]bool{}
	for _, s := range samples {
		names[s.Name] = true
	}
	return names
}

// Every metric the alerts and the dashboard query is exported by a running
// operator that has reconciled, admitted a Pod and won the Lease.
func TestAlertAndDashboardMetricsAreExported(t *testing.T) {
	t.Parallel()
	used := kitMetrics(t)
	for _, m := range []string{"controller_runtime_reconcile_errors_total", "workqueue_depth", "controller_runtime_webhook_latency_seconds_bucket", "leader_election_master_status"} {
		require.Contains(t, used, m, "the alerts cover the documented signals")
	}

	cp := controlplane.StartT(t, controlplane.Options{})
	ctx := context.Background()
	p := operatorproc.RunAgainst(t, operatorBin, cp, "--controllers=replicaset", "--leader-elect", "--leader-election-namespace=default")
	_, err := cp.InstallWebhooks(ctx, repoPath(t, "config", "webhook"), controlplane.WebhookServer{Host: p.Webhook, CABundle: cp.CACert()})
	require.NoError(t, err)
	cs := cp.Clientset()
	_, err = cs.AppsV1().ReplicaSets("default").Create(ctx, replicaSet("default", "metrics"), metav1.CreateOptions{})
	require.NoError(t, err)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "metrics"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}}},
	}
	require.Eventually(t, func() bool { // webhook configurations take effect asynchronously
		created, err := cs.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{})
		return err == nil && created.Annotations["example-mutating-admission-webhook"] == "foo"
	}, 30*time.Second, 200*time.Millisecond)

	var missing map[string][]string
	require.Eventually(t, func() bool {
		have := exported(t, p)
		missing = map[string][]string{}
		for name, where := range used {
			if !have[name] {
				missing[name] = where
			}
		}
		return len(missing) == 0
	}, 30*time.Second, 500*time.Millisecond, "queried by config/prometheus or config/grafana, not exported: %v", &missing)
	assert.Empty(t, missing)
}
