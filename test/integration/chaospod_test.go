package integration_test

import (
	"context"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	chaosv1 "github.com/hexagonal-operator/operator/api/chaos/v1"
	chaosv2 "github.com/hexagonal-operator/operator/api/chaos/v2"
	"github.com/hexagonal-operator/operator/test/controlplane"
)

// chaosEnv is a control plane with the ChaosPod CRD and the operator's
// webhooks installed, both pointed at an in-process operator (running the
// chaospod controller unless args say otherwise).
type chaosEnv struct {
	cp  *controlplane.ControlPlane
	cs  kubernetes.Interface
	dyn dynamic.Interface
	op  *running
}

func startChaos(t *testing.T, opts controlplane.Options, args ...string) *chaosEnv {
	t.Helper()
	cp := controlplane.StartT(t, opts)
	ctx := context.Background()
	root, err := controlplane.RepoRoot()
	require.NoError(t, err)
	cfg := operatorConfig(t, cp, append([]string{"--controllers=chaospod"}, args...)...)
	server := controlplane.WebhookServer{Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(cfg.WebhookPort)), CABundle: cp.CACert()}
	_, err = cp.InstallCRDs(ctx, root+"/config/crd", &server)
	require.NoError(t, err)
	op := startOperator(t, cfg)
	_, err = cp.InstallWebhooks(ctx, root+"/config/webhook", server)
	require.NoError(t, err)
	dyn, err := dynamic.NewForConfig(cp.Config)
	require.NoError(t, err)
	e := &chaosEnv{cp: cp, cs: cp.Clientset(), dyn: dyn, op: op}
	e.waitForWebhooks(t)
	return e
}

// waitForWebhooks waits until the API server calls the ChaosPod
// defaulter: it learns about new configurations a moment later.
func (e *chaosEnv) waitForWebhooks(t *testing.T) {
	t.Helper()
	probe := chaosPodV1("probe", nil)
	var last error
	require.Eventually(t, func() bool {
		got, err := e.dyn.Resource(chaosv1.GroupVersionResource).Namespace("default").Create(context.Background(), probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		last = err
		if err != nil {
			return false
		}
		_, defaulted, _ := unstructured.NestedString(got.Object, "spec", "nextStop")
		return defaulted
	}, 60*time.Second, 50*time.Millisecond, "the API server never called the defaulting webhook (last error: %v)", last)
}

func podTemplate() map[string]any {
	return map[string]any{
		"metadata": map[string]any{"labels": map[string]any{"app": "chaos"}, "annotations": map[string]any{"note": "kept"}},
		"spec":     map[string]any{"containers": []any{map[string]any{"name": "pause", "image": "registry.k8s.io/pause:3.10"}}},
	}
}

func chaosPodV1(name string, spec map[string]any) *unstructured.Unstructured {
	if spec == nil {
		spec = map[string]any{}
	}
	spec["template"] = podTemplate()
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": chaosv1.SchemeGroupVersion.String(), "kind": chaosv1.Kind,
		"metadata": map[string]any{"name": name},
		"spec":     spec,
	}}
}

func chaosPodV2(name string, stop map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": chaosv2.SchemeGroupVersion.String(), "kind": chaosv1.Kind,
		"metadata": map[string]any{"name": name},
		"spec":     map[string]any{"podTemplate": podTemplate(), "stop": stop},
	}}
}

func (e *chaosEnv) v1(ns string) dynamic.ResourceInterface {
	return e.dyn.Resource(chaosv1.GroupVersionResource).Namespace(ns)
}

func (e *chaosEnv) v2(ns string) dynamic.ResourceInterface {
	return e.dyn.Resource(chaosv2.GroupVersionResource).Namespace(ns)
}

func TestChaosPodReadsTheSameInBothVersions(t *testing.T) {
	t.Parallel()
	// Webhooks and conversion serve whatever --controllers says; without
	// the controller nobody else writes the objects under test.
	e := startChaos(t, controlplane.Options{}, "--controllers=replicaset")
	ctx := context.Background()
	require.NoError(t, e.cp.EnsureNamespace(ctx, "versions"))

	at := time.Now().Add(30 * time.Minute).UTC().Truncate(time.Second).Format(time.RFC3339)
	created, err := e.v2("versions").Create(ctx, chaosPodV2("from-v2", map[string]any{"at": at, "interval": "90s"}), metav1.CreateOptions{})
	require.NoError(t, err)
	assert.Equal(t, "90s", nested(t, created, "spec", "stop", "interval"), "the interval is stored as written")

	v1, err := e.v1("versions").Get(ctx, "from-v2", metav1.GetOptions{})
	require.NoError(t, err)
	v2, err := e.v2("versions").Get(ctx, "from-v2", metav1.GetOptions{})
	require.NoError(t, err)

	// One object, two spellings.
	assert.Equal(t, v1.GetUID(), v2.GetUID())
	assert.Equal(t, v1.GetResourceVersion(), v2.GetResourceVersion())
	assert.Equal(t, nestedAny(t, v1, "spec", "template"), nestedAny(t, v2, "spec", "podTemplate"))
	assert.Equal(t, nestedAny(t, v1, "spec", "nextStop"), nestedAny(t, v2, "spec", "stop", "at"))
	assert.Equal(t, "90s", v1.GetAnnotations()[chaosv1.StopIntervalAnnotation], "v1 keeps the v2-only field")
	assert.Equal(t, "90s", nested(t, v2, "spec", "stop", "interval"))
	assert.NotContains(t, v2.GetAnnotations(), chaosv1.StopIntervalAnnotation, "the annotation is v1's spelling only")

	// A v1 object reads as v2 too, and a list converts every item.
	_, err = e.v1("versions").Create(ctx, chaosPodV1("from-v1", map[string]any{"nextStop": at}), metav1.CreateOptions{})
	require.NoError(t, err)
	list, err := e.v2("versions").List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	require.Len(t, list.Items, 2)
	for _, item := range list.Items {
		assert.Equal(t, chaosv2.SchemeGroupVersion.String(), item.GetAPIVersion())
		assert.Equal(t, at, nested(t, &item, "spec", "stop", "at"), item.GetName())
		assert.NotNil(t, nestedAny(t, &item, "spec", "podTemplate"), item.GetName())
	}

	// An update through v2 keeps what v1 stored.
	v2.SetLabels(map[string]string{"edited": "v2"})
	_, err = e.v2("versions").Update(ctx, v2, metav1.UpdateOptions{})
	require.NoError(t, err)
	after, err := e.v1("versions").Get(ctx, "from-v2", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, "v2", after.GetLabels()["edited"])
	assert.Equal(t, "90s", after.GetAnnotations()[chaosv1.StopIntervalAnnotation])

	// kubectl prints the documented columns.
	kubectl, err := controlplane.Binary("kubectl")
	require.NoError(t, err)
	out, err := exec.Command(kubectl, "--kubeconfig", e.cp.KubeconfigPath, "get", "chaos", "-n", "versions").CombinedOutput()
	require.NoError(t, err, string(out))
	header := strings.Fields(strings.SplitN(string(out), "\n", 2)[0])
	assert.Equal(t, []string{"NAME", "READY", "NEXT", "STOP", "LAST", "RUN", "AGE"}, header, string(out))
	assert.Contains(t, string(out), "from-v2")
}

func TestChaosPodAdmissionDenials(t *testing.T) {
	t.Parallel()
	e := startChaos(t, controlplane.Options{})
	ctx := context.Background()
	require.NoError(t, e.cp.EnsureNamespace(ctx, "denials"))

	for _, tc := range []struct {
		name     string
		interval string
	}{{"too-short", "500ms"}, {"too-long", "25h"}} {
		_, err := e.v2("denials").Create(ctx, chaosPodV2(tc.name, map[string]any{"interval": tc.interval}), metav1.CreateOptions{})
		require.Error(t, err, tc.name)
		assert.True(t, apierrors.IsInvalid(err) || apierrors.IsForbidden(err), "%s: %v", tc.name, err)
		// The CRD's schema rule answers first; the webhook says the same.
		assert.Contains(t, err.Error(), "must be between 1s and 24h", tc.name)
	}

	// The defaulter fills what is unset or past: 1 minute ahead and, at
	// v2, a 10 s interval.
	before := time.Now()
	got, err := e.v2("denials").Create(ctx, chaosPodV2("defaulted", map[string]any{"at": "2001-01-01T00:00:00Z"}), metav1.CreateOptions{})
	require.NoError(t, err)
	assert.Equal(t, "10s", nested(t, got, "spec", "stop", "interval"))
	at, err := time.Parse(time.RFC3339, nested(t, got, "spec", "stop", "at"))
	require.NoError(t, err)
	assert.WithinRange(t, at, before.Add(time.Minute-time.Second).Truncate(time.Second), time.Now().Add(time.Minute+time.Second))

	// Delaying nextStop by more than an hour is refused, at both versions.
	_, err = e.v1("denials").Create(ctx, chaosPodV1("delayed", map[string]any{"nextStop": time.Now().Add(10 * time.Minute).UTC().Format(time.RFC3339)}), metav1.CreateOptions{})
	require.NoError(t, err)
	later := time.Now().Add(3 * time.Hour).UTC().Format(time.RFC3339)
	err = updateChaosPod(ctx, e.v1("denials"), "delayed", func(o *unstructured.Unstructured) error {
		return unstructured.SetNestedField(o.Object, later, "spec", "nextStop")
	})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "it is not allowed to delay .spec.nextStop for more than 1 hour")
	err = updateChaosPod(ctx, e.v2("denials"), "delayed", func(o *unstructured.Unstructured) error {
		return unstructured.SetNestedField(o.Object, later, "spec", "stop", "at")
	})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "it is not allowed to delay .spec.stop.at for more than 1 hour")
}

// updateChaosPod reads, edits and writes name as a careful client does,
// again when the operator wrote it in between.
func updateChaosPod(ctx context.Context, c dynamic.ResourceInterface, name string, edit func(*unstructured.Unstructured) error) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		obj, err := c.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if err := edit(obj); err != nil {
			return err
		}
		_, err = c.Update(ctx, obj, metav1.UpdateOptions{})
		return err
	})
}

// stop is a Pod deletion seen by a watch, with the nextStop the ChaosPod
// had when it happened.
type stop struct {
	seen, nextStop time.Time
}

func TestChaosPodLifecycleCyclesItsPod(t *testing.T) {
	t.Parallel()
	e := startChaos(t, controlplane.Options{})
	ctx := context.Background()
	require.NoError(t, e.cp.EnsureNamespace(ctx, "cycle"))

	pods, err := e.cs.CoreV1().Pods("cycle").Watch(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", "chaos").String()})
	require.NoError(t, err)
	defer pods.Stop()
	_, err = e.v2("cycle").Create(ctx, chaosPodV2("chaos", map[string]any{"interval": "3s"}), metav1.CreateOptions{})
	require.NoError(t, err)

	// Two full cycles: created, stopped at nextStop, created again, ...
	var (
		uids  []types.UID
		stops []stop
	)
	deadline := time.After(60 * time.Second)
	for len(uids) < 3 {
		select {
		case ev := <-pods.ResultChan():
			pod, ok := ev.Object.(*corev1.Pod)
			require.True(t, ok, "watch event %v", ev.Type)
			switch ev.Type {
			case watch.Added:
				uids = append(uids, pod.UID)
				e.checkPod(t, pod)
				require.Eventually(t, func() bool {
					cp, err := e.v2("cycle").Get(ctx, "chaos", metav1.GetOptions{})
					require.NoError(t, err)
					lastRun, _, _ := unstructured.NestedString(cp.Object, "status", "lastRun")
					return lastRun == pod.CreationTimestamp.UTC().Format(time.RFC3339)
				}, 2*time.Second, 20*time.Millisecond, "status.lastRun names Pod %d's creation time", len(uids))
			case watch.Deleted:
				cp, err := e.v1("cycle").Get(ctx, "chaos", metav1.GetOptions{})
				require.NoError(t, err)
				next, err := time.Parse(time.RFC3339, nested(t, cp, "spec", "nextStop"))
				require.NoError(t, err)
				stops = append(stops, stop{seen: time.Now(), nextStop: next})
			}
		case <-deadline:
			t.Fatalf("saw %d Pods and %d stops in 60 s, want 3 Pods", len(uids), len(stops))
		}
	}
	assert.Len(t, stops, 2)
	assert.Len(t, map[types.UID]bool{uids[0]: true, uids[1]: true, uids[2]: true}, 3, "each cycle has a new Pod")
	for i, s := range stops {
		// nextStop may already be the next cycle's when read: the stop
		// happened no earlier than the nextStop one interval before.
		assert.False(t, s.seen.Before(s.nextStop.Add(-3*time.Second)), "stop %d seen at %s, before its nextStop", i, s.seen)
		t.Logf("stop %d: seen %s after the nextStop read back", i, s.seen.Sub(s.nextStop))
	}

	events, err := e.cs.EventsV1().Events("cycle").List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	reasons := map[string]int{}
	for _, ev := range events.Items {
		reasons[ev.Reason]++
	}
	assert.Positive(t, reasons["PodCreated"], "events: %v", reasons)
	assert.Positive(t, reasons["PodStopped"], "events: %v", reasons)
}

// checkPod asserts a ChaosPod's Pod is made from its template.
func (e *chaosEnv) checkPod(t *testing.T, pod *corev1.Pod) {
	t.Helper()
	assert.Equal(t, "chaos", pod.Labels["app"])
	assert.Equal(t, "kept", pod.Annotations["note"])
	owner := metav1.GetControllerOf(pod)
	require.NotNil(t, owner, "the Pod has a controller owner reference")
	assert.Equal(t, chaosv1.Kind, owner.Kind)
	assert.Equal(t, chaosv1.SchemeGroupVersion.String(), owner.APIVersion)
}

func TestDeletingAChaosPodDeletesItsPod(t *testing.T) {
	t.Parallel()
	e := startChaos(t, controlplane.Options{ControllerManager: true})
	ctx := context.Background()
	require.NoError(t, e.cp.EnsureNamespace(ctx, "gc"))

	_, err := e.v1("gc").Create(ctx, chaosPodV1("doomed", nil), metav1.CreateOptions{})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		_, err := e.cs.CoreV1().Pods("gc").Get(ctx, "doomed", metav1.GetOptions{})
		return err == nil
	}, 30*time.Second, 50*time.Millisecond, "the operator never created the Pod")

	require.NoError(t, e.v1("gc").Delete(ctx, "doomed", metav1.DeleteOptions{}))
	require.Eventually(t, func() bool {
		_, err := e.cs.CoreV1().Pods("gc").Get(ctx, "doomed", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	}, 60*time.Second, 100*time.Millisecond, "the garbage collector never deleted the Pod")
	assert.Zero(t, e.op.counter(t, "controller_runtime_reconcile_errors_total", map[string]string{"controller": "chaospod"}),
		"a ChaosPod that is gone is not an error")
}

func nestedAny(t *testing.T, obj *unstructured.Unstructured, path ...string) any {
	t.Helper()
	v, _, err := unstructured.NestedFieldNoCopy(obj.Object, path...)
	require.NoError(t, err)
	return v
}

func nested(t *testing.T, obj *unstructured.Unstructured, path ...string) string {
	t.Helper()
	s, ok := nestedAny(t, obj, path...).(string)
	require.True(t, ok, "%v is not a string in %s", path, obj.GetName())
	return s
}
