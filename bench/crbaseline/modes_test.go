package main

import (
	"context"
	"flag"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"
	"time"
	"unsafe"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	chaosv1 "github.com/hexagonal-operator/operator/bench/crbaseline/api/v1"
)

// The fixture every mode's cache holds: one ReplicaSet, already labeled
// (so that the ReplicaSet controller leaves it alone and the cache does
// not change under the test), and its Pods, which share labels,
// annotations and their owner reference.
const (
	fixtureNamespace = "crbaseline-modes"
	fixtureRS        = "web"
)

var fixturePods = []string{"web-1", "web-2"}

// TestModes runs the manager of each mode the way main builds it, against
// a real kube-apiserver and etcd, and checks that the mode's options take
// effect on what its cache holds and how it hands it out.
func TestModes(t *testing.T) {
	ctrl.SetLogger(logr.Discard())
	env, cfg := startControlPlane(t)
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	require.NoError(t, err)
	createFixture(t, c)

	tests := []struct {
		name string
		args []string
		// metadataOnly: Pods are cached as PartialObjectMetadata.
		metadataOnly bool
		// stripped: cached Pods carry no labels or annotations.
		stripped bool
		// managedFields: cached objects keep their managedFields.
		managedFields bool
		// shared: reads hand out the cache's own objects, whose equal
		// owner references are one.
		shared            bool
		wantPriorityQueue *bool
	}{
		{name: "default", managedFields: true},
		{name: "tuned", args: []string{"--tuned"}, metadataOnly: true},
		{name: "expert", args: []string{"--expert"}, metadataOnly: true, stripped: true, shared: true, wantPriorityQueue: ptr.To(true)},
		{name: "expert fifo", args: []string{"--expert", "--priority-queue=false"}, metadataOnly: true, stripped: true, shared: true, wantPriorityQueue: ptr.To(false)},
	}
	// Not parallel: each manager registers operator_cache_objects in
	// controller-runtime's one metrics registry.
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := t.Context()
			s, mgr := startManager(t, env, cfg, tt.args)
			reader := mgr.GetCache()

			assert.Equal(t, tt.wantPriorityQueue, mgr.GetControllerOptions().UsePriorityQueue, "UsePriorityQueue")

			// Pods: labels, annotations and managedFields as the mode
			// caches them; both Pods' owner references are one slice
			// only where they were interned and reads do not copy.
			var pods []client.Object
			for _, name := range fixturePods {
				pod := s.mode.pod()
				require.NoError(t, reader.Get(ctx, client.ObjectKey{Namespace: fixtureNamespace, Name: name}, pod))
				pods = append(pods, pod)
			}
			_, isMetadata := pods[0].(*metav1.PartialObjectMetadata)
			assert.Equal(t, tt.metadataOnly, isMetadata, "Pods cached as %T", pods[0])
			for _, pod := range pods {
				if tt.stripped {
					assert.Empty(t, pod.GetLabels(), "labels of %s", pod.GetName())
					assert.Empty(t, pod.GetAnnotations(), "annotations of %s", pod.GetName())
				} else {
					assert.Equal(t, map[string]string{"app": "web"}, pod.GetLabels(), "labels of %s", pod.GetName())
					assert.Equal(t, map[string]string{"team": "a"}, pod.GetAnnotations(), "annotations of %s", pod.GetName())
				}
				assert.Equal(t, tt.managedFields, len(pod.GetManagedFields()) > 0, "managedFields of %s", pod.GetName())
				require.Len(t, pod.GetOwnerReferences(), 1)
			}
			assert.Equal(t, pods[0].GetOwnerReferences(), pods[1].GetOwnerReferences())
			sameOwners := unsafe.SliceData(pods[0].GetOwnerReferences()) == unsafe.SliceData(pods[1].GetOwnerReferences())
			assert.Equal(t, tt.shared, sameOwners, "Pods share their owner references")

			// ReplicaSets keep their labels in every mode; two reads of
			// one hand out one label map only where reads do not copy.
			key := client.ObjectKey{Namespace: fixtureNamespace, Name: fixtureRS}
			rs1, rs2 := s.mode.replicaSet(), s.mode.replicaSet()
			require.NoError(t, reader.Get(ctx, key, rs1))
			require.NoError(t, reader.Get(ctx, key, rs2))
			assert.Equal(t, map[string]string{"app": "web", labelKey: labelValue}, rs1.GetLabels())
			assert.Equal(t, tt.managedFields, len(rs1.GetManagedFields()) > 0, "managedFields of the ReplicaSet")
			sameLabels := reflect.ValueOf(rs1.GetLabels()).UnsafePointer() == reflect.ValueOf(rs2.GetLabels()).UnsafePointer()
			assert.Equal(t, tt.shared, sameLabels, "two reads share the ReplicaSet's labels")

			// operator_cache_objects counts every informer's store, and
			// agrees with the store behind controller-runtime's
			// informer, metadata-only or not.
			assert.Equal(t, map[string]float64{"Pod": 2, "ReplicaSet": 1, "ChaosPod": 0}, cacheObjectsMetric(t))
			for obj, want := range map[client.Object]int{s.mode.pod(): 2, s.mode.replicaSet(): 1} {
				informer, err := reader.GetInformer(ctx, obj)
				require.NoError(t, err)
				shared, ok := informer.(toolscache.SharedIndexInformer)
				require.True(t, ok, "the informer of %T is a %T", obj, informer)
				assert.Len(t, shared.GetStore().ListKeys(), want)
			}
		})
	}

	t.Run("expert reconcilers leave the cache alone", func(t *testing.T) {
		testExpertReconcilersCopy(t, env, cfg, c)
	})
}

// testExpertReconcilersCopy runs each reconciler once, by hand, on an
// object the expert mode's cache hands out as its own, and checks that the
// reconciler wrote its change and that the object read before is as it
// was: it changed a copy.
func testExpertReconcilersCopy(t *testing.T, env *envtest.Environment, cfg *rest.Config, c client.Client) {
	ctx := t.Context()
	const namespace = "crbaseline-copy"
	require.NoError(t, c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}))
	// No controller runs: the test is the only one to reconcile.
	s, mgr := startManager(t, env, cfg, []string{"--expert", "--controllers="})
	key := client.ObjectKey{Namespace: namespace, Name: "bare"}

	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: key.Name, Labels: map[string]string{"app": "bare"}},
		Spec: appsv1.ReplicaSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "bare"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "bare"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx"}}},
			},
		},
	}
	require.NoError(t, c.Create(ctx, rs))
	cachedRS := s.mode.replicaSet()
	require.EventuallyWithT(t, func(ct *assert.CollectT) {
		assert.NoError(ct, mgr.GetClient().Get(ctx, key, cachedRS))
	}, 30*time.Second, 20*time.Millisecond)
	rsReconciler := &ReplicaSetReconciler{
		Client:       mgr.GetClient(),
		Recorder:     mgr.GetEventRecorder("replicaset-controller"),
		MetadataOnly: s.mode.metadataOnlyRS,
	}
	_, err := rsReconciler.Reconcile(ctx, ctrl.Request{NamespacedName: key})
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"app": "bare"}, cachedRS.GetLabels(), "the ReplicaSet read before the reconcile")
	var written appsv1.ReplicaSet
	require.NoError(t, mgr.GetAPIReader().Get(ctx, key, &written))
	assert.Equal(t, labelValue, written.Labels[labelKey])

	cp := &chaosv1.ChaosPod{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: key.Name, Labels: map[string]string{"app": "chaos"}},
		Spec: chaosv1.ChaosPodSpec{Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "chaos"}},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx"}}},
		}},
	}
	require.NoError(t, c.Create(ctx, cp))
	var cachedCP chaosv1.ChaosPod
	require.EventuallyWithT(t, func(ct *assert.CollectT) {
		assert.NoError(ct, mgr.GetClient().Get(ctx, key, &cachedCP))
	}, 30*time.Second, 20*time.Millisecond)
	before := cachedCP.DeepCopy()
	cpReconciler := &ChaosPodReconciler{
		Client:           mgr.GetClient(),
		Recorder:         mgr.GetEventRecorder("chaospod-controller"),
		MetadataOnlyPods: s.mode.metadataOnlyPods,
	}
	result, err := cpReconciler.Reconcile(ctx, ctrl.Request{NamespacedName: key})
	require.NoError(t, err)
	assert.Positive(t, result.RequeueAfter, "requeued for the stop")
	assert.Equal(t, before, &cachedCP, "the ChaosPod read before the reconcile")
	var writtenCP chaosv1.ChaosPod
	require.NoError(t, mgr.GetAPIReader().Get(ctx, key, &writtenCP))
	assert.NotNil(t, writtenCP.Spec.NextStop, "spec.nextStop written")
	assert.NotNil(t, writtenCP.Status.LastRun, "status.lastRun written")
	var pod corev1.Pod
	require.NoError(t, mgr.GetAPIReader().Get(ctx, key, &pod), "the ChaosPod's Pod")
	assert.True(t, metav1.IsControlledBy(&pod, &writtenCP))
}

// startControlPlane starts etcd and kube-apiserver with envtest from
// KUBEBUILDER_ASSETS, else the repository's bin/ (`make tools` builds
// them there), with the ChaosPod CRD installed; they stop with the test.
func startControlPlane(t *testing.T) (*envtest.Environment, *rest.Config) {
	t.Helper()
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if assets == "" {
		var err error
		assets, err = filepath.Abs(filepath.Join("..", "..", "bin"))
		require.NoError(t, err)
	}
	var missing []string
	for _, name := range []string{"etcd", "kube-apiserver", "kubectl"} {
		info, err := os.Stat(filepath.Join(assets, name))
		if err != nil || info.IsDir() || info.Mode()&0o111 == 0 {
			missing = append(missing, name)
		}
	}
	require.Empty(t, missing, "control plane binaries missing from %s (KUBEBUILDER_ASSETS, else the repository's bin/): run `make tools` at the repository's root", assets)

	env := &envtest.Environment{
		BinaryAssetsDirectory: assets,
		CRDDirectoryPaths:     []string{filepath.Join("..", "..", "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
	}
	cfg, err := env.Start()
	// Registered before the check: a half-started control plane has
	// processes to stop too.
	t.Cleanup(func() { assert.NoError(t, env.Stop(), "stop the control plane") })
	require.NoError(t, err, "start etcd and kube-apiserver from %s", assets)
	return env, cfg
}

// createFixture creates the namespace, the ReplicaSet and its Pods.
func createFixture(t *testing.T, c client.Client) {
	t.Helper()
	ctx := t.Context()
	require.NoError(t, c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fixtureNamespace}}))
	labels := map[string]string{"app": "web"}
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: fixtureNamespace, Name: fixtureRS, Labels: map[string]string{"app": "web", labelKey: labelValue}},
		Spec: appsv1.ReplicaSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx"}}},
			},
		},
	}
	require.NoError(t, c.Create(ctx, rs))
	owner := metav1.NewControllerRef(rs, appsv1.SchemeGroupVersion.WithKind("ReplicaSet"))
	for _, name := range fixturePods {
		require.NoError(t, c.Create(ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{
				Namespace:       fixtureNamespace,
				Name:            name,
				Labels:          labels,
				Annotations:     map[string]string{"team": "a"},
				OwnerReferences: []metav1.OwnerReference{*owner},
			},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx"}}},
		}))
	}
}

// startManager parses args as main does, builds the manager from them
// with main's functions, starts it and waits for its informers to sync;
// the manager stops with the test. Only its servers' addresses and the
// controller name check differ from a run of the binary.
func startManager(t *testing.T, env *envtest.Environment, base *rest.Config, args []string) (settings, ctrl.Manager) {
	t.Helper()
	args = append(args,
		"--metrics-bind-address=0",
		"--health-probe-bind-address=0",
		"--webhook-port="+strconv.Itoa(freePort(t)),
		"--webhook-cert-dir="+env.WebhookInstallOptions.LocalServingCertDir,
	)
	s, err := parseFlags(flag.NewFlagSet("crbaseline", flag.ContinueOnError), args)
	require.NoError(t, err)
	cfg := rest.CopyConfig(base)
	s.mode.configureClient(cfg)
	opts, objects := managerOptions(s)
	// Every test's manager names its controllers alike in one process.
	opts.Controller.SkipNameValidation = ptr.To(true)
	mgr, err := newManager(cfg, opts, objects, s)
	require.NoError(t, err)
	t.Cleanup(func() { metrics.Registry.Unregister(objects) })

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			assert.NoError(t, err, "manager")
		case <-time.After(time.Minute):
			t.Error("the manager did not stop within a minute")
		}
	})

	// main's readiness check, on the informers the mode's controllers
	// watch through; the probe server is off.
	synced := informersSynced(mgr.GetCache(), []client.Object{s.mode.replicaSet(), s.mode.pod(), &chaosv1.ChaosPod{}})
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, "/readyz", http.NoBody)
	require.NoError(t, err)
	deadline := time.Now().Add(time.Minute)
	for {
		select {
		case err := <-done:
			done <- err // for the cleanup
			t.Fatalf("the manager stopped before its informers synced: %v", err)
		default:
		}
		err := synced(req)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the informers did not sync within a minute: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return s, mgr
}

// cacheObjectsMetric is operator_cache_objects as controller-runtime's
// metrics registry serves it, by kind; its selector must be empty.
func cacheObjectsMetric(t *testing.T) map[string]float64 {
	t.Helper()
	families, err := metrics.Registry.Gather()
	require.NoError(t, err)
	got := map[string]float64{}
	for _, f := range families {
		if f.GetName() != "operator_cache_objects" {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			assert.Empty(t, labels["selector"], "selector of kind %s", labels["kind"])
			got[labels["kind"]] = m.GetGauge().GetValue()
		}
	}
	return got
}

// freePort is a TCP port nothing listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())
	return port
}
