package cache_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	metadatafake "k8s.io/client-go/metadata/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/hexagonal-operator/operator/internal/adapters/cache"
	"github.com/hexagonal-operator/operator/internal/ports"
)

var configMapsGVR = corev1.SchemeGroupVersion.WithResource("configmaps")

func configMap(ns, name string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: ns, Name: name, Annotations: map[string]string{"team": "payments"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationUpdate}},
		},
		Data: map[string]string{"color": "blue"},
	}
}

// resourceCache is a cache on fakes holding objs, with metrics on reg
// (nil: none), stopped when the test ends.
func resourceCache(t *testing.T, client *fake.Clientset, reg prometheus.Registerer, opts cache.Options) *cache.Cache {
	t.Helper()
	scheme := metadatafake.NewTestScheme()
	require.NoError(t, metav1.AddMetaToScheme(scheme))
	c, err := cache.New(client, metadatafake.NewSimpleMetadataClient(scheme), reg, nil, opts)
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		assert.NoError(t, c.Stop(ctx))
	})
	return c
}

func configMaps(t *testing.T, c *cache.Cache) *cache.Resource[*corev1.ConfigMap] {
	t.Helper()
	r, err := cache.NewResource[*corev1.ConfigMap](c, configMapsGVR)
	require.NoError(t, err)
	return r
}

func TestNewResourceChecksItsArguments(t *testing.T) {
	t.Parallel()
	c := resourceCache(t, fake.NewClientset(), nil, cache.Options{})
	tests := []struct {
		name string
		new  func() error
	}{
		{"no cache", func() error { _, err := cache.NewResource[*corev1.ConfigMap](nil, configMapsGVR); return err }},
		{"no version", func() error {
			_, err := cache.NewResource[*corev1.ConfigMap](c, schema.GroupVersionResource{Resource: "configmaps"})
			return err
		}},
		{"no resource", func() error {
			_, err := cache.NewResource[*corev1.ConfigMap](c, corev1.SchemeGroupVersion.WithResource(""))
			return err
		}},
		{"replicasets have their own methods", func() error {
			_, err := cache.NewResource[*appsv1.ReplicaSet](c, appsv1.SchemeGroupVersion.WithResource("replicasets"))
			return err
		}},
		{"not a pointer to an API type", func() error { _, err := cache.NewResource[cache.Object](c, configMapsGVR); return err }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Error(t, tt.new())
		})
	}
}

func TestResourceReadsTypedObjects(t *testing.T) {
	t.Parallel()
	c := resourceCache(t, fake.NewClientset(configMap("shop", "settings"), configMap("other", "settings")), nil, cache.Options{Namespace: "shop"})
	r := configMaps(t, c)
	key := types.NamespacedName{Namespace: "shop", Name: "settings"}
	_, err := r.GetObject(t.Context(), key)
	require.ErrorIs(t, err, cache.ErrNotStarted)
	require.NoError(t, c.Start(t.Context()))

	got, err := r.GetObject(t.Context(), key)

	require.NoError(t, err)
	assert.Equal(t, "ConfigMap", r.Kind())
	assert.Equal(t, map[string]string{"color": "blue"}, got.Data)
	assert.Equal(t, map[string]string{"team": "payments"}, got.Annotations)
	assert.Nil(t, got.ManagedFields, "stripped like every other kind")
	for _, missing := range []types.NamespacedName{
		{Namespace: "shop", Name: "absent"},
		{Namespace: "other", Name: "settings"}, // outside Options.Namespace
	} {
		_, err = r.GetObject(t.Context(), missing)
		assert.ErrorIs(t, err, ports.ErrNotFound, "%s", missing)
		assert.ErrorContains(t, err, "configmap "+missing.String())
	}
	assert.True(t, c.HasSynced(), "the resource's informer counts towards the cache's sync")
}

func TestResourceReadsClusterScopedObjects(t *testing.T) {
	t.Parallel()
	c := resourceCache(t, fake.NewClientset(&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "reader"}}), nil, cache.Options{})
	r, err := cache.NewResource[*rbacv1.ClusterRole](c, rbacv1.SchemeGroupVersion.WithResource("clusterroles"))
	require.NoError(t, err)
	require.NoError(t, c.Start(t.Context()))

	got, err := r.GetObject(t.Context(), types.NamespacedName{Name: "reader"})

	require.NoError(t, err)
	assert.Equal(t, "reader", got.Name)
	assert.Equal(t, "ClusterRole", r.Kind())
}

// The resource's informer is lazy like the others, and its handlers get
// the cached objects as additions and later changes as they come.
func TestResourceSource(t *testing.T) {
	t.Parallel()
	client := fake.NewClientset(configMap("shop", "a"))
	c := resourceCache(t, client, nil, cache.Options{})
	r := configMaps(t, c)
	require.NoError(t, c.Start(t.Context()))
	require.Eventually(t, c.HasSynced, 30*time.Second, 10*time.Millisecond)
	for _, a := range client.Actions() {
		assert.NotEqual(t, "configmaps", a.GetResource().Resource, "nobody asked for configmaps yet")
	}

	h := &nameLog{}
	require.NoError(t, r.AddEventHandler(h))
	require.EventuallyWithT(t, func(t *assert.CollectT) {
		assert.Equal(t, []string{"add shop/a"}, h.get())
	}, 30*time.Second, 10*time.Millisecond)
	_, err := client.CoreV1().ConfigMaps("shop").Create(t.Context(), configMap("shop", "b"), metav1.CreateOptions{})
	require.NoError(t, err)
	require.NoError(t, client.CoreV1().ConfigMaps("shop").Delete(t.Context(), "a", metav1.DeleteOptions{}))

	require.EventuallyWithT(t, func(t *assert.CollectT) {
		assert.Equal(t, []string{"add shop/a", "add shop/b", "delete shop/a"}, h.get())
	}, 30*time.Second, 10*time.Millisecond)
	require.Eventually(t, c.HasSynced, 30*time.Second, 10*time.Millisecond)
}

// The cache's readiness names the resource's informer until it has listed.
func TestResourceReadiness(t *testing.T) {
	t.Parallel()
	client := fake.NewClientset(configMap("shop", "a"))
	listing, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	client.PrependReactor("list", "configmaps", func(k8stesting.Action) (bool, runtime.Object, error) {
		once.Do(func() { close(listing) })
		<-release
		return false, nil, nil // the tracker answers
	})
	c := resourceCache(t, client, nil, cache.Options{})
	require.NoError(t, configMaps(t, c).AddEventHandler(&nameLog{}))
	require.NoError(t, c.Start(t.Context()))
	select {
	case <-listing:
	case <-time.After(30 * time.Second):
		t.Fatal("the informer never listed")
	}

	assert.ErrorContains(t, c.Check(t.Context()), "informers not synced: v1/configmaps")
	close(release)
	require.Eventually(t, c.HasSynced, 30*time.Second, 10*time.Millisecond)
}

func TestResourceObjectsMetric(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	c := resourceCache(t, fake.NewClientset(configMap("shop", "a"), configMap("shop", "b")), reg, cache.Options{})
	require.NoError(t, configMaps(t, c).AddEventHandler(&nameLog{}))
	require.NoError(t, c.Start(t.Context()))
	require.Eventually(t, c.HasSynced, 30*time.Second, 10*time.Millisecond)

	families, err := reg.Gather()
	require.NoError(t, err)
	got := map[string]float64{}
	for _, f := range families {
		if f.GetName() == "operator_cache_objects" {
			for _, m := range f.GetMetric() {
				got[m.GetLabel()[0].GetValue()] = m.GetGauge().GetValue()
			}
		}
	}
	assert.Equal(t, map[string]float64{"v1/configmaps": 2}, got)
}

// A resource the typed clientset has no informer for fails when it is
// first used, with its name.
func TestResourceWithoutTypedInformer(t *testing.T) {
	t.Parallel()
	c := resourceCache(t, fake.NewClientset(), nil, cache.Options{})
	r, err := cache.NewResource[*corev1.ConfigMap](c, corev1.SchemeGroupVersion.WithResource("widgets"))
	require.NoError(t, err)

	err = r.AddEventHandler(&nameLog{})

	assert.ErrorContains(t, err, "v1/widgets")
	assert.ErrorContains(t, r.AddEventHandler(nil), "nil handler")
}

// nameLog writes down what a source delivered, one line per event.
type nameLog struct {
	mu  sync.Mutex
	log []string
}

func (n *nameLog) OnAdd(o metav1.Object)       { n.add("add " + o.GetNamespace() + "/" + o.GetName()) }
func (n *nameLog) OnUpdate(_, _ metav1.Object) {}
func (n *nameLog) OnDelete(o metav1.Object)    { n.add("delete " + o.GetNamespace() + "/" + o.GetName()) }
func (n *nameLog) add(line string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.log = append(n.log, line)
}
func (n *nameLog) get() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return slices.Clone(n.log)
}
