package reliability_test

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
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
// running operator (both controllers). The process must ride it out —
// alive, /healthz 200, /readyz failing — and, once the API server is back,
// turn ready and converge everything: objects created right before the
// outage that it may have had no time for, and objects created right after.
func TestAPIServerOutage(t *testing.T) {
	t.Parallel()
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

	// Created right before the stop: the operator may or may not get to
	// them before its connections drop.
	createReplicaSets(t, cs, ns, "pending", 20, 4)
	createChaosPods(t, dyn, ns, "pending", 2)
	pendingRS, _ := unlabeled(t, cs, ns)

	stopping := time.Now()
	require.NoError(t, cp.StopComponent("kube-apiserver"))
	down := time.Now()
	// The apiserver readiness check reuses an answer for a second.
	const readyzLag = 1500 * time.Millisecond
	var samples, live, readyLate int
	var unready time.Time
	tick := time.NewTicker(100 * time.Millisecond)
	for time.Since(down) < outage {
		<-tick.C
		require.True(t, p.Running(), "the operator exited during the outage:\n%s", p.Output())
		samples++
		at := time.Now()
		if operatorproc.HTTPStatus(p.Health+"/readyz") == http.StatusOK {
			if at.Sub(down) > readyzLag {
				readyLate++
			}
		} else if unready.IsZero() {
			unready = at
		}
		if operatorproc.HTTPStatus(p.Health+"/healthz") == http.StatusOK {
			live++
		}
	}
	tick.Stop()
	require.NoError(t, cp.RestartComponent(ctx, "kube-apiserver"))
	up := time.Now()
	var readyAgain time.Time
	require.Eventually(t, func() bool {
		if operatorproc.HTTPStatus(p.Health+"/readyz") != http.StatusOK {
			return false
		}
		readyAgain = time.Now()
		return true
	}, 30*time.Second, 50*time.Millisecond, "/readyz is 200 again once the API server is back")

	createReplicaSets(t, cs, ns, "after", 20, 4)
	createChaosPods(t, dyn, ns, "after", 2)
	// Generous: the informers retry refused connections every few seconds,
	// but any other error during the API server's start goes to their
	// reflectors' exponential back-off (up to a minute), and reconciles
	// that failed during the outage back off per object.
	labeled := waitAllLabeled(t, cs, ns, 60, 90*time.Second)
	running := waitChaosPodsRunning(t, dyn, cs, ns, 7, 90*time.Second)

	require.True(t, p.Running(), "the operator survived the outage")
	assert.Equal(t, http.StatusOK, operatorproc.HTTPStatus(p.Health+"/healthz"))
	figure(t, "outage-api-server-stop", down.Sub(stopping))
	figure(t, "outage-api-server-down", up.Sub(down))
	figure(t, "outage-replicasets-unlabeled-at-stop", len(pendingRS))
	figure(t, "outage-healthz-200-samples", fmt.Sprintf("%d/%d", live, samples))
	figure(t, "outage-readyz-200-samples-past-lag", readyLate)
	if !unready.IsZero() {
		figure(t, "outage-readyz-failing-after-stop", unready.Sub(down))
	}
	figure(t, "outage-readyz-200-after-restart", readyAgain.Sub(up))
	figure(t, "outage-replicasets-converged-after-restart", labeled.Sub(up))
	figure(t, "outage-chaospods-converged-after-restart", running.Sub(up))
	// Liveness must not fail because a dependency is away: a restart
	// would not bring the API server back. Readiness must tell.
	assert.Equal(t, samples, live, "/healthz answered 200 throughout the outage")
	assert.False(t, unready.IsZero(), "/readyz failed during the outage")
	assert.Zero(t, readyLate, "/readyz answered 200 more than %s into the outage", readyzLag)
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
