package reliability_test

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	chaosv1 "github.com/hexagonal-operator/operator/api/chaos/v1"
	"github.com/hexagonal-operator/operator/test/controlplane"
	"github.com/hexagonal-operator/operator/test/operatorproc"
)

// TestAPIServerOutage takes kube-apiserver away for ten seconds under a
// running operator (both controllers). The process must ride it out: alive,
// /healthz and /readyz 200 throughout, since neither liveness nor admission
// needs the API server, with operator_apiserver_reachable telling the
// outage instead. Once the API server is back, the gauge returns to 1 and
// everything converges: objects created right before the outage that it
// may have had no time for, and objects created right after.
func TestAPIServerOutage(t *testing.T) {
	t.Parallel()
	// Longer than a probe interval plus its timeout, so that the probe sees
	// the outage whatever its phase when the API server goes.
	const outage = 10 * time.Second
	const ns = "outage"
	// An API server that does not stop within a second is killed: the
	// outage starts when it is gone, not after a slow drain.
	cp := controlplane.StartT(t, controlplane.Options{StopGrace: time.Second})
	ctx := context.Background()
	root, err := controlplane.RepoRoot()
	require.NoError(t, err)
	crds := filepath.Join(root, "config", "crd")
	// The operator fails its start without the CRD, and the conversion
	// webhook's address is known only once it runs; v1 objects need no
	// conversion in between.
	_, err = cp.InstallCRDs(ctx, crds, nil)
	require.NoError(t, err)
	p := operatorproc.RunAgainst(t, operatorBin, cp, "--shutdown-timeout=10s")
	_, err = cp.InstallCRDs(ctx, crds, &controlplane.WebhookServer{Host: p.Webhook, CABundle: cp.CACert()})
	require.NoError(t, err)
	require.NoError(t, cp.EnsureNamespace(ctx, ns))
	cs := cp.Clientset()
	dyn, err := dynamic.NewForConfig(cp.Config)
	require.NoError(t, err)

	// Working before the outage.
	createReplicaSets(t, cs, ns, "steady", 20, 4)
	createChaosPods(t, dyn, ns, "steady", 3)
	waitAllLabeled(t, cs, ns, 20, 30*time.Second)
	waitChaosPodsRunning(t, dyn, cs, ns, 3, 30*time.Second)
	require.Eventually(t, func() bool {
		v, ok := reachableGauge(p)
		return ok && v == 1
	}, 15*time.Second, 100*time.Millisecond, "operator_apiserver_reachable is 1 before the outage")

	// Created right before the stop: the operator may or may not get to
	// them before its connections drop.
	createReplicaSets(t, cs, ns, "pending", 20, 4)
	createChaosPods(t, dyn, ns, "pending", 2)
	pendingRS, _ := unlabeled(t, cs, ns)

	stopping := time.Now()
	require.NoError(t, cp.StopComponent("kube-apiserver"))
	down := time.Now()
	var samples, live, ready int
	var gaugeZero time.Time
	tick := time.NewTicker(100 * time.Millisecond)
	for time.Since(down) < outage {
		<-tick.C
		require.True(t, p.Running(), "the operator exited during the outage:\n%s", p.Output())
		samples++
		if operatorproc.HTTPStatus(p.Health+"/readyz") == http.StatusOK {
			ready++
		}
		if operatorproc.HTTPStatus(p.Health+"/healthz") == http.StatusOK {
			live++
		}
		if v, ok := reachableGauge(p); ok && v == 0 && gaugeZero.IsZero() {
			gaugeZero = time.Now()
		}
	}
	tick.Stop()
	// Readiness stays sampled while the API server starts again and the
	// informers reconnect, until the gauge says it is back: neither is a
	// reason to refuse admission.
	restarted := make(chan error, 1)
	restarting := time.Now()
	go func() { restarted <- cp.RestartComponent(ctx, "kube-apiserver") }()
	var up, reachableAgain time.Time
	var samplesAfter, readyAfter int
	// Within five times the slowest recovery docs/reliability.md reports.
	deadline := time.After(30 * time.Second)
	tick = time.NewTicker(100 * time.Millisecond)
	for up.IsZero() || reachableAgain.IsZero() {
		select {
		case err := <-restarted:
			require.NoError(t, err, "restart kube-apiserver")
			up = time.Now()
		case <-deadline:
			require.Fail(t, "operator_apiserver_reachable is not 1 again 30 s into the restart",
				"restarted: %v, samples: %d", !up.IsZero(), samplesAfter)
		case <-tick.C:
			samplesAfter++
			if operatorproc.HTTPStatus(p.Health+"/readyz") == http.StatusOK {
				readyAfter++
			}
			if v, ok := reachableGauge(p); ok && v == 1 && reachableAgain.IsZero() {
				reachableAgain = time.Now()
			}
		}
	}
	tick.Stop()

	createReplicaSets(t, cs, ns, "after", 20, 4)
	createChaosPods(t, dyn, ns, "after", 2)
	// Within five times the slowest convergence docs/reliability.md
	// reports: tight enough that client-go's reflector back-off alone (20 s
	// and more before the operator watched the API server's return) fails
	// it. ChaosPods take longer: reconciles that failed during the outage
	// back off per object.
	labeled := waitAllLabeled(t, cs, ns, 60, 8*time.Second)
	running := waitChaosPodsRunning(t, dyn, cs, ns, 7, 25*time.Second)

	require.True(t, p.Running(), "the operator survived the outage")
	assert.Equal(t, http.StatusOK, operatorproc.HTTPStatus(p.Health+"/healthz"))
	assert.Equal(t, http.StatusOK, operatorproc.HTTPStatus(p.Health+"/readyz"))
	figure(t, "outage-api-server-stop", down.Sub(stopping))
	figure(t, "outage-api-server-down", up.Sub(down))
	figure(t, "outage-replicasets-unlabeled-at-stop", len(pendingRS))
	figure(t, "outage-healthz-200-samples", fmt.Sprintf("%d/%d", live, samples))
	figure(t, "outage-readyz-200-samples", fmt.Sprintf("%d/%d", ready, samples))
	figure(t, "outage-readyz-200-samples-during-restart", fmt.Sprintf("%d/%d", readyAfter, samplesAfter))
	if !gaugeZero.IsZero() {
		figure(t, "outage-gauge-0-after-stop", gaugeZero.Sub(down))
	}
	figure(t, "outage-api-server-restart", up.Sub(restarting))
	figure(t, "outage-gauge-1-after-restart-began", reachableAgain.Sub(restarting))
	figure(t, "outage-replicasets-converged-after-restart", labeled.Sub(up))
	figure(t, "outage-chaospods-converged-after-restart", running.Sub(up))
	// Liveness must not fail because a dependency is away: a restart
	// would not bring the API server back. Nor readiness: an unready
	// replica leaves the webhook without endpoints and fails every Pod
	// create in the cluster, though admission never calls the API server.
	assert.Equal(t, samples, live, "/healthz answered 200 throughout the outage")
	assert.Equal(t, samples, ready, "/readyz answered 200 throughout the outage")
	assert.Equal(t, samplesAfter, readyAfter, "/readyz answered 200 while the API server came back")
	assert.False(t, gaugeZero.IsZero(), "operator_apiserver_reachable went to 0 during the outage")
	out := p.Output()
	assert.Equal(t, 1, strings.Count(out, `"api server unreachable"`), "the loss is logged once, not per probe")
	assert.Equal(t, 1, strings.Count(out, `"api server reachable again"`), "the recovery is logged once")
}

func createChaosPods(t *testing.T, dyn dynamic.Interface, namespace, prefix string, n int) {
	t.Helper()
	for i := range n {
		name := fmt.Sprintf("%s-%04d", prefix, i)
		obj := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": chaosv1.SchemeGroupVersion.String(), "kind": chaosv1.Kind,
			"metadata": map[string]any{"name": name, "namespace": namespace},
			"spec": map[string]any{"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app": "chaos"}},
				"spec":     map[string]any{"containers": []any{map[string]any{"name": "pause", "image": "registry.k8s.io/pause:3.10"}}},
			}},
		}}
		_, err := dyn.Resource(chaosv1.GroupVersionResource).Namespace(namespace).Create(context.Background(), obj, metav1.CreateOptions{})
		require.NoError(t, err, "create chaospod %s/%s", namespace, name)
	}
}

// waitChaosPodsRunning waits until want ChaosPods exist in namespace and the
// controller is on top of each: its Pod exists, status.lastRun is set and
// spec.nextStop is ahead. It returns when that was first seen.
func waitChaosPodsRunning(t *testing.T, dyn dynamic.Interface, cs kubernetes.Interface, namespace string, want int, timeout time.Duration) time.Time {
	t.Helper()
	var at time.Time
	var behind []string
	require.Eventually(t, func() bool {
		list, err := dyn.Resource(chaosv1.GroupVersionResource).Namespace(namespace).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return false
		}
		behind = nil
		for _, item := range list.Items {
			if !chaosPodRunning(cs, &item) {
				behind = append(behind, item.GetName())
			}
		}
		if len(list.Items) != want || len(behind) > 0 {
			return false
		}
		at = time.Now()
		return true
	}, timeout, 100*time.Millisecond, "chaospods in %s running (want %d)", namespace, want)
	return at
}

func chaosPodRunning(cs kubernetes.Interface, obj *unstructured.Unstructured) bool {
	lastRun, _, _ := unstructured.NestedString(obj.Object, "status", "lastRun")
	nextStop, _, _ := unstructured.NestedString(obj.Object, "spec", "nextStop")
	stop, err := time.Parse(time.RFC3339, nextStop)
	if lastRun == "" || err != nil || !stop.After(time.Now()) {
		return false
	}
	pod, err := cs.CoreV1().Pods(obj.GetNamespace()).Get(context.Background(), obj.GetName(), metav1.GetOptions{})
	if err != nil {
		return false
	}
	owner := metav1.GetControllerOf(pod)
	return owner != nil && owner.UID == obj.GetUID()
}
