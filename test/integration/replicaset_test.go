package integration_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/fx"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/hexagonal-operator/operator/internal/adapters/controller"
	"github.com/hexagonal-operator/operator/internal/adapters/profiling"
	"github.com/hexagonal-operator/operator/internal/app"
	"github.com/hexagonal-operator/operator/test/controlplane"
)

func TestReplicaSetsAreLabeledAndForeignWritesSurvive(t *testing.T) {
	t.Parallel()
	cp := controlplane.StartT(t, controlplane.Options{})
	ctx := context.Background()
	cs := cp.Clientset()
	var prof *profiling.Server
	op := startOperator(t, operatorConfig(t, cp, "--pprof-bind-address=127.0.0.1:0"), fx.Populate(&prof))

	const n = 20
	for i := range n {
		name := fmt.Sprintf("rs-%02d", i)
		_, err := cs.AppsV1().ReplicaSets("default").Create(ctx, replicaSet(name, map[string]string{"app": name}), metav1.CreateOptions{})
		require.NoError(t, err)
		// Someone else labels it at the same time as the operator does.
		_, err = cs.AppsV1().ReplicaSets("default").Patch(ctx, name, types.MergePatchType,
			[]byte(`{"metadata":{"labels":{"foreign":"yes"}}}`), metav1.PatchOptions{})
		require.NoError(t, err)
	}
	require.Eventually(t, func() bool { return count(t, cs, "hello=world,foreign=yes") == n }, 30*time.Second, 50*time.Millisecond)
	for i := range n {
		rs, err := cs.AppsV1().ReplicaSets("default").Get(ctx, fmt.Sprintf("rs-%02d", i), metav1.GetOptions{})
		require.NoError(t, err)
		assert.Equal(t, fmt.Sprintf("rs-%02d", i), rs.Labels["app"], "the creator's label survives")
	}

	require.Eventually(t, func() bool {
		return op.counter(t, "controller_runtime_reconcile_total", map[string]string{"controller": "replicaset", "result": "success"}) >= n
	}, 10*time.Second, 50*time.Millisecond)
	names := op.families(t)
	for _, name := range []string{
		"controller_runtime_reconcile_total", "controller_runtime_reconcile_errors_total",
		"controller_runtime_reconcile_panics_total", "controller_runtime_reconcile_time_seconds",
		"controller_runtime_active_workers", "controller_runtime_max_concurrent_reconciles",
		"workqueue_depth", "workqueue_adds_total", "workqueue_queue_duration_seconds",
		"workqueue_work_duration_seconds", "workqueue_retries_total", "workqueue_unfinished_work_seconds",
		"workqueue_longest_running_processor_seconds", "rest_client_requests_total",
		"go_goroutines", "process_resident_memory_bytes", "operator_cache_objects",
		"controller_runtime_reconcile_timeouts_total", "controller_runtime_webhook_panics_total",
		"controller_runtime_conversion_webhook_panics_total",
		"certwatcher_read_certificate_total", "certwatcher_read_certificate_errors_total",
	} {
		assert.True(t, names[name], "metric %s exposed", name)
	}
	assert.Equal(t, float64(0), op.counter(t, "controller_runtime_reconcile_errors_total", map[string]string{"controller": "replicaset"}))

	// --pprof-bind-address serves the running operator's profiles.
	resp, err := http.Get("http://" + prof.Addr().String() + "/debug/pprof/goroutine?debug=1")
	require.NoError(t, err)
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, string(body), "operator/internal/adapters/controller.", "the controller's workers")
}

func TestAlreadyLabeledReplicaSetIsNotWritten(t *testing.T) {
	t.Parallel()
	cp := controlplane.StartT(t, controlplane.Options{})
	ctx := context.Background()
	cs := cp.Clientset()

	labeled, err := cs.AppsV1().ReplicaSets("default").Create(ctx, replicaSet("labeled", map[string]string{"hello": "world"}), metav1.CreateOptions{})
	require.NoError(t, err)
	startOperator(t, operatorConfig(t, cp))
	// A sentinel created later is labeled only after the informer has
	// delivered the earlier object too.
	_, err = cs.AppsV1().ReplicaSets("default").Create(ctx, replicaSet("sentinel", nil), metav1.CreateOptions{})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return count(t, cs, "hello=world") == 2 }, 30*time.Second, 50*time.Millisecond)

	after, err := cs.AppsV1().ReplicaSets("default").Get(ctx, "labeled", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, labeled.ResourceVersion, after.ResourceVersion, "no write to an already labeled ReplicaSet")
}

// mutedSource delivers nothing: with it in place of the ReplicaSet source,
// only Pod events can trigger a ReplicaSet's reconcile.
type mutedSource struct{ controller.Source }

func (mutedSource) AddEventHandler(toolscache.ResourceEventHandler) error { return nil }

func TestPodEventReachesItsControllingReplicaSet(t *testing.T) {
	t.Parallel()
	cp := controlplane.StartT(t, controlplane.Options{})
	ctx := context.Background()
	cs := cp.Clientset()
	startOperator(t, operatorConfig(t, cp), fx.Decorate(func(next app.Sources) app.Sources {
		return func(w app.Watched) controller.Source {
			if w.Controller == "replicaset" && w.Resource.Resource == "replicasets" {
				return mutedSource{w.Source}
			}
			return next(w)
		}
	}))

	owner, err := cs.AppsV1().ReplicaSets("default").Create(ctx, replicaSet("owner", nil), metav1.CreateOptions{})
	require.NoError(t, err)
	other, err := cs.AppsV1().ReplicaSets("default").Create(ctx, replicaSet("bystander", nil), metav1.CreateOptions{})
	require.NoError(t, err)

	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: "owned", Namespace: "default",
			OwnerReferences: []metav1.OwnerReference{
				{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: owner.Name, UID: owner.UID, Controller: ptr.To(true)},
				// A non-controlling owner is not enqueued.
				{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: other.Name, UID: other.UID},
			},
		},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}}},
	}
	_, err = cs.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{})
	require.NoError(t, err)

	require.Eventually(t, func() bool {
		rs, err := cs.AppsV1().ReplicaSets("default").Get(ctx, "owner", metav1.GetOptions{})
		return err == nil && rs.Labels["hello"] == "world"
	}, 30*time.Second, 50*time.Millisecond)
	rs, err := cs.AppsV1().ReplicaSets("default").Get(ctx, "bystander", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Empty(t, rs.Labels["hello"], "only the controlling owner is reconciled")
}

func TestOnlyTheLeaderReconcilesAndAStandbyTakesOver(t *testing.T) {
	t.Parallel()
	cp := controlplane.StartT(t, controlplane.Options{})
	ctx := context.Background()
	cs := cp.Clientset()
	le := []string{
		"--leader-elect", "--leader-election-namespace=default",
		"--leader-election-lease-duration=4s", "--leader-election-renew-deadline=3s", "--leader-election-retry-period=500ms",
	}
	leaderGauge := map[string]string{"name": "hexagonal-operator-leader"}
	a := startOperator(t, operatorConfig(t, cp, le...))
	require.Eventually(t, func() bool { return a.counter(t, "leader_election_master_status", leaderGauge) == 1 }, 20*time.Second, 50*time.Millisecond)
	b := startOperator(t, operatorConfig(t, cp, le...))

	_, err := cs.AppsV1().ReplicaSets("default").Create(ctx, replicaSet("first", nil), metav1.CreateOptions{})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return count(t, cs, "hello=world") == 1 }, 30*time.Second, 50*time.Millisecond)
	assert.Equal(t, float64(0), b.counter(t, "leader_election_master_status", leaderGauge), "b is a standby")
	assert.True(t, b.families(t)["leader_election_slowpath_total"], "leader_election_slowpath_total exposed from the start")
	assert.Equal(t, float64(0), b.counter(t, "controller_runtime_reconcile_total", map[string]string{"controller": "replicaset"}), "a standby does not reconcile")

	stopped := time.Now()
	a.stop(t) // releases the Lease
	require.Eventually(t, func() bool { return b.counter(t, "leader_election_master_status", leaderGauge) == 1 }, 20*time.Second, 50*time.Millisecond)
	t.Logf("takeover after a graceful stop: %s", time.Since(stopped).Round(time.Millisecond))

	_, err = cs.AppsV1().ReplicaSets("default").Create(ctx, replicaSet("second", nil), metav1.CreateOptions{})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return count(t, cs, "hello=world") == 2 }, 30*time.Second, 50*time.Millisecond)
	assert.Positive(t, b.counter(t, "controller_runtime_reconcile_total", map[string]string{"controller": "replicaset"}))
}

func count(t *testing.T, cs kubernetes.Interface, selector string) int {
	t.Helper()
	list, err := cs.AppsV1().ReplicaSets("default").List(context.Background(), metav1.ListOptions{LabelSelector: selector})
	require.NoError(t, err)
	return len(list.Items)
}

func replicaSet(name string, labels map[string]string) *appsv1.ReplicaSet {
	sel := map[string]string{"rs": name}
	return &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, Labels: labels},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: ptr.To[int32](0),
			Selector: &metav1.LabelSelector{MatchLabels: sel},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: sel},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}}},
			},
		},
	}
}
