package cache_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	metadatafake "k8s.io/client-go/metadata/fake"
	k8stesting "k8s.io/client-go/testing"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/hexagonal-operator/operator/internal/adapters/cache"
	"github.com/hexagonal-operator/operator/internal/ports"
)

const (
	waitFor = 30 * time.Second
	tick    = 10 * time.Millisecond
)

func replicaSet(ns, name string) *appsv1.ReplicaSet {
	return &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{
		Namespace: ns, Name: name, Labels: map[string]string{"app": name},
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationUpdate}},
	}}
}

// pod is a Pod as the metadata client sees it, controlled by the
// ReplicaSet owner when owner is not empty.
func pod(ns, name, owner string, controller bool) *metav1.PartialObjectMetadata {
	p := &metav1.PartialObjectMetadata{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			Namespace: ns, Name: name,
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate}},
		},
	}
	if owner != "" {
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: owner, UID: types.UID(owner), Controller: ptr.To(controller)}}
	}
	return p
}

// kube is the fake clientset as the cache's client.
func kube(cs *fake.Clientset) kubernetes.Interface { return cs }

func fakeMetadata(objs ...runtime.Object) *metadatafake.FakeMetadataClient {
	scheme := metadatafake.NewTestScheme()
	_ = metav1.AddMetaToScheme(scheme)
	return metadatafake.NewSimpleMetadataClient(scheme, objs...)
}

// newCache returns a cache on the fakes, stopped when the test ends.
func newCache(t *testing.T, client *fake.Clientset, meta *metadatafake.FakeMetadataClient, opts cache.Options) *cache.Cache {
	t.Helper()
	c, err := cache.New(kube(client), meta, nil, zap.NewNop(), opts)
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitFor)
		defer cancel()
		assert.NoError(t, c.Stop(ctx))
	})
	return c
}

func startSynced(t *testing.T, c *cache.Cache) {
	t.Helper()
	require.NoError(t, c.Start(t.Context()))
	ctx, cancel := context.WithTimeout(t.Context(), waitFor)
	defer cancel()
	require.NoError(t, c.WaitForSync(ctx))
}

// objectOf is what an informer hands a handler, as a metav1.Object, a
// deletion's tombstone unwrapped (as the controller loop's handler does).
func objectOf(obj any) metav1.Object {
	if tombstone, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	return obj.(metav1.Object)
}

// handler collects what a source delivers.
type handler struct {
	mu      sync.Mutex
	added   []metav1.Object
	deleted []metav1.Object
}

func (h *handler) OnAdd(obj any, _ bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.added = append(h.added, objectOf(obj))
}
func (h *handler) OnUpdate(_, _ any) {}
func (h *handler) OnDelete(obj any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.deleted = append(h.deleted, objectOf(obj))
}
func (h *handler) addedObjects() []metav1.Object {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]metav1.Object(nil), h.added...)
}
func (h *handler) addedNames() []string {
	var names []string
	for _, o := range h.addedObjects() {
		names = append(names, o.GetNamespace()+"/"+o.GetName())
	}
	return names
}

func TestNewNeedsClients(t *testing.T) {
	t.Parallel()
	_, err := cache.New(nil, fakeMetadata(), nil, nil, cache.Options{})
	assert.Error(t, err)
	_, err = cache.New(kube(fake.NewClientset()), nil, nil, nil, cache.Options{})
	assert.Error(t, err)
}

func TestLifecycle(t *testing.T) {
	t.Parallel()
	c := newCache(t, fake.NewClientset(replicaSet("apps", "web")), fakeMetadata(), cache.Options{})
	key := types.NamespacedName{Namespace: "apps", Name: "web"}

	assert.False(t, c.HasSynced())
	assert.ErrorIs(t, c.Check(t.Context()), cache.ErrNotStarted)
	assert.Equal(t, "informers", c.Name())
	_, err := rsOf(t, c).Get(t.Context(), key)
	assert.ErrorIs(t, err, cache.ErrNotStarted)

	startSynced(t, c)
	assert.True(t, c.HasSynced())
	require.NoError(t, c.Check(t.Context()))
	require.NoError(t, c.Start(t.Context()), "starting twice does nothing")
	_, err = rsOf(t, c).Get(t.Context(), key)
	require.NoError(t, err)

	require.NoError(t, c.Stop(t.Context()))
	assert.False(t, c.HasSynced())
	assert.ErrorIs(t, c.Check(t.Context()), cache.ErrStopped)
	assert.ErrorIs(t, c.Start(t.Context()), cache.ErrStopped)
	assert.ErrorIs(t, rsOf(t, c).AddEventHandler(&handler{}), cache.ErrStopped)
	assert.ErrorIs(t, c.WaitForSync(t.Context()), cache.ErrStopped)
	require.NoError(t, c.Stop(t.Context()), "stopping twice does nothing")
}

func TestInformersOutliveTheStartContext(t *testing.T) {
	t.Parallel()
	c := newCache(t, fake.NewClientset(replicaSet("apps", "web")), fakeMetadata(), cache.Options{})
	require.NoError(t, rsOf(t, c).AddEventHandler(&handler{}))
	ctx, cancel := context.WithCancel(t.Context())
	require.NoError(t, c.Start(ctx))
	cancel() // as fx does once every start hook has run

	require.NoError(t, c.WaitForSync(t.Context()))
	_, err := rsOf(t, c).Get(t.Context(), types.NamespacedName{Namespace: "apps", Name: "web"})
	require.NoError(t, err)
}

// The sync gate must stay shut until the initial list has been delivered,
// or readiness and the controller loop would act on an empty cache.
func TestSyncedOnlyAfterTheInitialList(t *testing.T) {
	t.Parallel()
	client := fake.NewClientset(replicaSet("apps", "web"))
	listing, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	client.PrependReactor("list", "replicasets", func(k8stesting.Action) (bool, runtime.Object, error) {
		once.Do(func() { close(listing) })
		<-release
		return false, nil, nil // the tracker answers
	})
	c := newCache(t, client, fakeMetadata(), cache.Options{})
	require.NoError(t, rsOf(t, c).AddEventHandler(&handler{}))

	waited := make(chan error, 1)
	go func() { waited <- c.WaitForSync(t.Context()) }()
	require.NoError(t, c.Start(t.Context()))

	select {
	case <-listing:
	case <-time.After(waitFor):
		t.Fatal("the informer never listed")
	}
	assert.False(t, c.HasSynced())
	assert.ErrorContains(t, c.Check(t.Context()), "ReplicaSet")
	short, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	assert.ErrorIs(t, c.WaitForSync(short), context.DeadlineExceeded)
	select {
	case err := <-waited:
		t.Fatalf("WaitForSync returned %v before the list completed", err)
	default:
	}

	close(release)
	require.Eventually(t, c.HasSynced, waitFor, tick)
	require.NoError(t, <-waited)
}

func TestInformersStartOnlyForKindsAskedFor(t *testing.T) {
	t.Parallel()
	client := fake.NewClientset(replicaSet("apps", "web"))
	meta := fakeMetadata(pod("apps", "web-1", "web", true))
	c := newCache(t, client, meta, cache.Options{})
	require.NoError(t, rsOf(t, c).AddEventHandler(&handler{}))
	startSynced(t, c)

	assert.True(t, listed(client.Actions(), "replicasets"))
	assert.False(t, listed(meta.Actions(), "pods"), "nobody asked for pods")

	// Asked for after Start: starts at once, and the new handler gets the
	// cached objects as additions.
	pods := &handler{}
	require.NoError(t, podsOf(t, c).AddEventHandler(pods))
	require.EventuallyWithT(t, func(t *assert.CollectT) {
		assert.Equal(t, []string{"apps/web-1"}, pods.addedNames())
	}, waitFor, tick)
	require.Eventually(t, c.HasSynced, waitFor, tick)
	assert.True(t, listed(meta.Actions(), "pods"))
	assert.Equal(t, "Pod", podsOf(t, c).GroupKind().Kind)
	assert.Equal(t, "ReplicaSet", rsOf(t, c).GroupKind().Kind)
}

func listed(actions []k8stesting.Action, resource string) bool {
	for _, a := range actions {
		if a.GetVerb() == "list" && a.GetResource().Resource == resource {
			return true
		}
	}
	return false
}

func TestManagedFields(t *testing.T) {
	t.Parallel()
	for _, keep := range []bool{false, true} {
		t.Run(map[bool]string{false: "stripped by default", true: "kept on request"}[keep], func(t *testing.T) {
			t.Parallel()
			c := newCache(t, fake.NewClientset(replicaSet("apps", "web")),
				fakeMetadata(pod("apps", "web-1", "web", true)), cache.Options{KeepManagedFields: keep})
			pods := &handler{}
			require.NoError(t, podsOf(t, c).AddEventHandler(pods))
			startSynced(t, c)

			rs, err := rsOf(t, c).Get(t.Context(), types.NamespacedName{Namespace: "apps", Name: "web"})
			require.NoError(t, err)
			assert.Equal(t, keep, rs.ManagedFields != nil, "replicaset managedFields")
			assert.Equal(t, map[string]string{"app": "web"}, rs.Labels, "the rest stays")

			cachedPod, err := podsOf(t, c).Get(t.Context(), types.NamespacedName{Namespace: "apps", Name: "web-1"})
			require.NoError(t, err)
			assert.Equal(t, keep, cachedPod.ManagedFields != nil, "pod managedFields")
			assert.Equal(t, metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}, cachedPod.TypeMeta,
				"a metadata-only object says its kind, which the metadata client clears")
			require.Eventually(t, func() bool { return len(pods.addedObjects()) == 1 }, waitFor, tick)
			assert.Equal(t, keep, pods.addedObjects()[0].GetManagedFields() != nil, "delivered pod managedFields")
		})
	}
}

func TestNamespaceRestriction(t *testing.T) {
	t.Parallel()
	client := fake.NewClientset(replicaSet("mine", "web"), replicaSet("other", "web"))
	meta := fakeMetadata(pod("mine", "web-1", "web", true), pod("other", "web-1", "web", true))
	c := newCache(t, client, meta, cache.Options{Namespace: "mine"})
	rss, pods := &handler{}, &handler{}
	require.NoError(t, rsOf(t, c).AddEventHandler(rss))
	require.NoError(t, podsOf(t, c).AddEventHandler(pods))
	startSynced(t, c)

	_, err := rsOf(t, c).Get(t.Context(), types.NamespacedName{Namespace: "mine", Name: "web"})
	require.NoError(t, err)
	_, err = rsOf(t, c).Get(t.Context(), types.NamespacedName{Namespace: "other", Name: "web"})
	assert.ErrorIs(t, err, ports.ErrNotFound)
	_, err = podsOf(t, c).Get(t.Context(), types.NamespacedName{Namespace: "other", Name: "web-1"})
	assert.ErrorIs(t, err, ports.ErrNotFound)
	require.EventuallyWithT(t, func(t *assert.CollectT) {
		assert.Equal(t, []string{"mine/web"}, rss.addedNames())
		assert.Equal(t, []string{"mine/web-1"}, pods.addedNames())
	}, waitFor, tick)
	for _, a := range append(client.Actions(), meta.Actions()...) {
		assert.Equal(t, "mine", a.GetNamespace(), "%s %s asks for one namespace only", a.GetVerb(), a.GetResource().Resource)
	}
}

func TestReadsWaitForTheirInformerBoundedByContext(t *testing.T) {
	t.Parallel()
	client := fake.NewClientset()
	client.PrependReactor("list", "replicasets", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "apps", Resource: "replicasets"}, "", nil)
	})
	c := newCache(t, client, fakeMetadata(), cache.Options{})
	require.NoError(t, c.Start(t.Context()))
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()

	_, err := rsOf(t, c).Get(ctx, types.NamespacedName{Namespace: "apps", Name: "web"})

	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.NotErrorIs(t, err, ports.ErrNotFound, "an unsynced cache does not claim absence")
}

func TestWatchFailuresAreLogged(t *testing.T) {
	t.Parallel()
	client := fake.NewClientset()
	client.PrependReactor("list", "replicasets", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "apps", Resource: "replicasets"}, "", nil)
	})
	core, logs := observer.New(zap.InfoLevel)
	c, err := cache.New(kube(client), fakeMetadata(), nil, zap.New(core), cache.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, c.Stop(context.Background())) })
	require.NoError(t, rsOf(t, c).AddEventHandler(&handler{}))
	require.NoError(t, c.Start(t.Context()))

	require.Eventually(t, func() bool { return logs.FilterMessage("watch failed").Len() > 0 }, waitFor, tick)
	entry := logs.FilterMessage("watch failed").All()[0]
	assert.Equal(t, "ReplicaSet", entry.ContextMap()["kind"])
	assert.Contains(t, entry.ContextMap()["error"], "forbidden")
}

func TestObjectsMetric(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	c, err := cache.New(kube(fake.NewClientset(replicaSet("apps", "a"), replicaSet("apps", "b"))),
		fakeMetadata(pod("apps", "a-1", "a", true)), reg, nil, cache.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, c.Stop(context.Background())) })
	require.NoError(t, rsOf(t, c).AddEventHandler(&handler{}))
	require.NoError(t, podsOf(t, c).AddEventHandler(&handler{}))
	startSynced(t, c)

	families, err := reg.Gather()
	require.NoError(t, err)
	got := map[string]float64{}
	for _, f := range families {
		if f.GetName() != "operator_cache_objects" {
			continue
		}
		for _, m := range f.GetMetric() {
			require.Len(t, m.GetLabel(), 2)
			assert.Equal(t, "kind", m.GetLabel()[0].GetName())
			assert.Equal(t, "selector", m.GetLabel()[1].GetName())
			assert.Empty(t, m.GetLabel()[1].GetValue(), "no selector")
			got[m.GetLabel()[0].GetValue()] = m.GetGauge().GetValue()
		}
	}
	assert.Equal(t, map[string]float64{"ReplicaSet": 2, "Pod": 1}, got)

	_, err = cache.New(kube(fake.NewClientset()), fakeMetadata(), reg, nil, cache.Options{})
	assert.Error(t, err, "a second cache on the same registry is refused")
}

func TestStopWaitsForTheInformers(t *testing.T) {
	t.Parallel()
	c, err := cache.New(kube(fake.NewClientset(replicaSet("apps", "web"))), fakeMetadata(), nil, nil, cache.Options{})
	require.NoError(t, err)
	require.NoError(t, rsOf(t, c).AddEventHandler(&handler{}))
	startSynced(t, c)

	ctx, cancel := context.WithTimeout(t.Context(), waitFor)
	defer cancel()
	require.NoError(t, c.Stop(ctx))

	expired, cancelExpired := context.WithCancel(t.Context())
	cancelExpired()
	require.NoError(t, c.Stop(expired), "a stopped cache stops at once")
}

func TestWaitersLearnThatTheCacheStopped(t *testing.T) {
	t.Parallel()
	client := fake.NewClientset()
	client.PrependReactor("list", "replicasets", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "apps", Resource: "replicasets"}, "", nil)
	})
	c := newCache(t, client, fakeMetadata(), cache.Options{})
	require.NoError(t, rsOf(t, c).AddEventHandler(&handler{}))
	require.NoError(t, c.Start(t.Context()))
	waited, read := make(chan error, 1), make(chan error, 1)
	go func() { waited <- c.WaitForSync(t.Context()) }()
	go func() {
		_, err := rsOf(t, c).Get(t.Context(), types.NamespacedName{Namespace: "apps", Name: "web"})
		read <- err
	}()

	require.NoError(t, c.Stop(t.Context()))

	assert.ErrorIs(t, <-waited, cache.ErrStopped)
	assert.ErrorIs(t, <-read, cache.ErrStopped)
}

func TestStopBeforeStart(t *testing.T) {
	t.Parallel()
	c, err := cache.New(kube(fake.NewClientset()), fakeMetadata(), nil, nil, cache.Options{})
	require.NoError(t, err)
	waited := make(chan error, 1)
	go func() { waited <- c.WaitForSync(t.Context()) }()

	require.NoError(t, c.Stop(t.Context()))

	assert.ErrorIs(t, <-waited, cache.ErrStopped)
	assert.ErrorIs(t, c.Start(t.Context()), cache.ErrStopped)
}

// rsOf is c's ReplicaSets, as the operator caches them.
func rsOf(t testing.TB, c *cache.Cache) *cache.Resource[*appsv1.ReplicaSet] {
	t.Helper()
	r, err := cache.NewResource[*appsv1.ReplicaSet](c, appsv1.SchemeGroupVersion.WithResource("replicasets"))
	require.NoError(t, err)
	return r
}

// podsOf is c's Pods, metadata only, as the operator caches them.
func podsOf(t testing.TB, c *cache.Cache) *cache.Resource[*metav1.PartialObjectMetadata] {
	t.Helper()
	r, err := cache.NewMetadataResource(c, corev1.SchemeGroupVersion.WithResource("pods"), "Pod")
	require.NoError(t, err)
	return r
}

func TestTrimsDropMetadataNoReaderNeeds(t *testing.T) {
	t.Parallel()
	labeled := pod("apps", "web-1", "web", true)
	labeled.Labels = map[string]string{"app": "web"}
	labeled.Annotations = map[string]string{"note": "long"}
	meta := fakeMetadata(labeled)
	c := newCache(t, fake.NewClientset(), meta, cache.Options{})
	podsGVR := corev1.SchemeGroupVersion.WithResource("pods")
	trimmed, err := cache.NewMetadataResource(c, podsGVR, "Pod", cache.WithoutLabels, cache.WithoutAnnotations)
	require.NoError(t, err)
	require.NoError(t, trimmed.AddEventHandler(&handler{}))
	// A second controller asking for Pods the same way shares the informer.
	alike, err := cache.NewMetadataResource(c, podsGVR, "Pod", cache.WithoutLabels, cache.WithoutAnnotations)
	require.NoError(t, err)
	seen := &handler{}
	require.NoError(t, alike.AddEventHandler(seen))
	startSynced(t, c)
	lists := 0
	for _, a := range meta.Actions() {
		if a.GetVerb() == "list" && a.GetResource() == podsGVR {
			lists++
		}
	}
	assert.Equal(t, 1, lists, "one informer lists Pods for both")
	assert.Eventually(t, func() bool { return len(seen.addedObjects()) == 1 }, waitFor, tick, "the second handler is served by it")

	got, err := trimmed.Get(t.Context(), types.NamespacedName{Namespace: "apps", Name: "web-1"})
	require.NoError(t, err)
	assert.Nil(t, got.Labels)
	assert.Nil(t, got.Annotations)
	assert.Equal(t, labeled.OwnerReferences, got.OwnerReferences, "the rest stays")
	assert.Equal(t, "Pod", got.Kind)

	_, err = cache.NewMetadataResource(c, podsGVR, "Pod")
	require.Error(t, err, "the same kind cached untrimmed would share the trimmed informer")
	assert.Contains(t, err.Error(), "already cached as metadata without labels without annotations")
	again, err := cache.NewMetadataResource(c, podsGVR, "Pod", cache.WithoutLabels, cache.WithoutAnnotations)
	require.NoError(t, err, "the same trims share it")
	_, err = again.Get(t.Context(), types.NamespacedName{Namespace: "apps", Name: "web-1"})
	require.NoError(t, err)
}
