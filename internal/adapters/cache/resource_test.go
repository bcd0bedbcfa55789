package cache_test

import (
	"context"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	metadatafake "k8s.io/client-go/metadata/fake"
	"k8s.io/client-go/rest"
	k8stesting "k8s.io/client-go/testing"

	chaosv1 "github.com/hexagonal-operator/operator/api/chaos/v1"
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
	c, err := cache.New(kube(client), metadatafake.NewSimpleMetadataClient(scheme), reg, nil, opts)
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
		want string
	}{
		{"no cache", func() error { _, err := cache.NewResource[*corev1.ConfigMap](nil, configMapsGVR); return err }, "a cache is required"},
		{"no version", func() error {
			_, err := cache.NewResource[*corev1.ConfigMap](c, schema.GroupVersionResource{Resource: "configmaps"})
			return err
		}, "version and resource are required"},
		{"no resource", func() error {
			_, err := cache.NewResource[*corev1.ConfigMap](c, corev1.SchemeGroupVersion.WithResource(""))
			return err
		}, "version and resource are required"},
		{"a kind cached another way already", func() error {
			if _, err := cache.NewResource[*corev1.ConfigMap](c, configMapsGVR); err != nil {
				return err
			}
			_, err := cache.NewMetadataResource(c, configMapsGVR, "ConfigMap")
			return err
		}, "kind ConfigMap is already cached as typed:/v1, Resource=configmaps"},
		{"a metadata resource without its kind", func() error {
			_, err := cache.NewMetadataResource(c, configMapsGVR, "")
			return err
		}, "a kind is required"},
		{"a dynamic resource without a client", func() error {
			_, err := cache.NewDynamicResource[*corev1.ConfigMap](c, nil, configMapsGVR)
			return err
		}, "a dynamic client is required"},
		{"not a pointer to an API type", func() error { _, err := cache.NewResource[cache.Object](c, configMapsGVR); return err }, "not a pointer to an API type"},
		{"a resource that does not serve the kind", func() error {
			_, err := cache.NewResource[*corev1.ConfigMap](c, corev1.SchemeGroupVersion.WithResource("widgets"))
			return err
		}, "cache resource v1/widgets: ConfigMap objects are configmaps, not widgets"},
		{"a group the cache does not read typed", func() error {
			_, err := cache.NewResource[*rbacv1.ClusterRole](c, rbacv1.SchemeGroupVersion.WithResource("clusterroles"))
			return err
		}, "cache resource rbac.authorization.k8s.io/v1/clusterroles"},
		{"another resource's type", func() error {
			_, err := cache.NewResource[*corev1.Secret](c, configMapsGVR)
			return err
		}, "cache resource v1/configmaps: Secret objects are secrets, not configmaps"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.ErrorContains(t, tt.new(), tt.want)
		})
	}
}

// On a kubernetes.Clientset a resource is read through its group's REST
// client: any listable kind of the typed groups, under the resource
// that serves it. Building one does no I/O, so the refusals need no server.
func TestNewResourceOnTheRESTClients(t *testing.T) {
	t.Parallel()
	client, err := kubernetes.NewForConfigAndClient(&rest.Config{Host: "http://127.0.0.1:1"}, http.DefaultClient)
	require.NoError(t, err)
	c, err := cache.New(client, fakeMetadata(), nil, nil, cache.Options{Namespace: "shop"})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, c.Stop(context.Background())) })
	kindOf := func(r interface{ GroupKind() schema.GroupKind }, err error) (string, error) {
		if err != nil {
			return "", err
		}
		return r.GroupKind().Kind, nil
	}
	tests := []struct {
		name    string
		new     func() (string, error)
		want    string // the kind, or with wantErr the error
		wantErr bool
	}{
		{"a kind of the typed clients", func() (string, error) {
			return kindOf(cache.NewResource[*corev1.ConfigMap](c, configMapsGVR))
		}, "ConfigMap", false},
		{"a kind beyond them", func() (string, error) {
			return kindOf(cache.NewResource[*appsv1.Deployment](c, appsv1.SchemeGroupVersion.WithResource("deployments")))
		}, "Deployment", false},
		{"a cluster-scoped kind", func() (string, error) {
			return kindOf(cache.NewResource[*corev1.Namespace](c, corev1.SchemeGroupVersion.WithResource("namespaces")))
		}, "Namespace", false},
		{"a kind whose plural is its name", func() (string, error) {
			//nolint:staticcheck // SA1019: Endpoints is the built-in kind whose plural is its name, deprecated or not.
			return kindOf(cache.NewResource[*corev1.Endpoints](c, corev1.SchemeGroupVersion.WithResource("endpoints")))
		}, "Endpoints", false},
		{"a resource that does not serve the kind", func() (string, error) {
			return kindOf(cache.NewResource[*corev1.ConfigMap](c, corev1.SchemeGroupVersion.WithResource("widgets")))
		}, "cache resource v1/widgets: ConfigMap objects are configmaps, not widgets", true},
		{"a kind of another group version", func() (string, error) {
			return kindOf(cache.NewResource[*corev1.ConfigMap](c, appsv1.SchemeGroupVersion.WithResource("configmaps")))
		}, "*v1.ConfigMap is not a kind of apps/v1", true},
		{"a type outside client-go's scheme", func() (string, error) {
			return kindOf(cache.NewResource[*chaosv1.ChaosPod](c, corev1.SchemeGroupVersion.WithResource("chaospods")))
		}, "*v1.ChaosPod is not a type of client-go's scheme", true},
		{"a type of another group", func() (string, error) {
			return kindOf(cache.NewResource[*rbacv1.ClusterRole](c, corev1.SchemeGroupVersion.WithResource("clusterroles")))
		}, "*v1.ClusterRole is not a kind of v1", true},
		{"a group the cache does not read typed", func() (string, error) {
			return kindOf(cache.NewResource[*rbacv1.ClusterRole](c, rbacv1.SchemeGroupVersion.WithResource("clusterroles")))
		}, "rbac.authorization.k8s.io/v1 is not a group the cache reads typed", true},
		{"a kind that cannot be listed", func() (string, error) {
			return kindOf(cache.NewResource[*authenticationv1.TokenReview](c, authenticationv1.SchemeGroupVersion.WithResource("tokenreviews")))
		}, "TokenReview cannot be listed", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			kind, err := tt.new()
			if tt.wantErr {
				assert.ErrorContains(t, err, tt.want)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, kind)
		})
	}
	assert.ErrorIs(t, c.Check(t.Context()), cache.ErrNotStarted, "nothing was asked for, let alone listed")
}

func TestResourceReadsTypedObjects(t *testing.T) {
	t.Parallel()
	c := resourceCache(t, fake.NewClientset(configMap("shop", "settings"), configMap("other", "settings")), nil, cache.Options{Namespace: "shop"})
	r := configMaps(t, c)
	key := types.NamespacedName{Namespace: "shop", Name: "settings"}
	_, err := r.Get(t.Context(), key)
	require.ErrorIs(t, err, cache.ErrNotStarted)
	require.NoError(t, c.Start(t.Context()))

	got, err := r.Get(t.Context(), key)

	require.NoError(t, err)
	assert.Equal(t, "ConfigMap", r.GroupKind().Kind)
	assert.Equal(t, map[string]string{"color": "blue"}, got.Data)
	assert.Equal(t, map[string]string{"team": "payments"}, got.Annotations)
	assert.Nil(t, got.ManagedFields, "stripped like every other kind")
	for _, missing := range []types.NamespacedName{
		{Namespace: "shop", Name: "absent"},
		{Namespace: "other", Name: "settings"}, // outside Options.Namespace
	} {
		_, err = r.Get(t.Context(), missing)
		assert.ErrorIs(t, err, ports.ErrNotFound, "%s", missing)
		assert.ErrorContains(t, err, "configmap "+missing.String())
	}
	assert.True(t, c.HasSynced(), "the resource's informer counts towards the cache's sync")
}

// A cluster-scoped kind is listed in full even in a cache restricted to
// one namespace, as a namespace does not hold it.
func TestResourceReadsClusterScopedObjects(t *testing.T) {
	t.Parallel()
	client := fake.NewClientset(&admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "operator"}})
	c := resourceCache(t, client, nil, cache.Options{Namespace: "shop"})
	r, err := cache.NewResource[*admissionregistrationv1.ValidatingWebhookConfiguration](c,
		admissionregistrationv1.SchemeGroupVersion.WithResource("validatingwebhookconfigurations"))
	require.NoError(t, err)
	require.NoError(t, c.Start(t.Context()))

	got, err := r.Get(t.Context(), types.NamespacedName{Name: "operator"})

	require.NoError(t, err)
	assert.Equal(t, "operator", got.Name)
	assert.Equal(t, "ValidatingWebhookConfiguration", r.GroupKind().Kind)
	assert.True(t, listed(client.Actions(), "validatingwebhookconfigurations"))
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

	assert.ErrorContains(t, c.Check(t.Context()), "informers not synced: ConfigMap")
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
	assert.Equal(t, map[string]float64{"ConfigMap": 2}, got)
}

func TestResourceRefusesANilHandler(t *testing.T) {
	t.Parallel()
	client := fake.NewClientset()
	c := resourceCache(t, client, nil, cache.Options{})
	require.NoError(t, c.Start(t.Context()))

	assert.ErrorContains(t, configMaps(t, c).AddEventHandler(nil), "nil handler")

	require.NoError(t, c.WaitForSync(t.Context()))
	assert.False(t, listed(client.Actions(), "configmaps"), "a refused handler asks for no informer")
}

// nameLog writes down what a source delivered, one line per event.
type nameLog struct {
	mu  sync.Mutex
	log []string
}

func (n *nameLog) OnAdd(obj any, _ bool) { n.add("add", objectOf(obj)) }
func (n *nameLog) OnUpdate(_, _ any)     {}
func (n *nameLog) OnDelete(obj any)      { n.add("delete", objectOf(obj)) }
func (n *nameLog) add(verb string, o metav1.Object) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.log = append(n.log, verb+" "+o.GetNamespace()+"/"+o.GetName())
}
func (n *nameLog) get() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return slices.Clone(n.log)
}

// A selector narrows what a resource's informer lists and watches; each
// selector of a kind has an informer of its own, shared by the resources
// that ask for it alike, and its count is labeled with it.
func TestSelectorNarrowsTheCache(t *testing.T) {
	t.Parallel()
	labeled := func(ns, name, team string) *corev1.ConfigMap {
		cm := configMap(ns, name)
		if team != "" {
			cm.Labels = map[string]string{"team": team}
		}
		return cm
	}
	client := fake.NewClientset(labeled("shop", "pay", "payments"), labeled("shop", "web", "frontend"), labeled("shop", "loose", ""))
	reg := prometheus.NewRegistry()
	c := resourceCache(t, client, reg, cache.Options{})
	payments, err := labels.Parse("team=payments")
	require.NoError(t, err)
	anyTeam, err := labels.Parse("team")
	require.NoError(t, err)
	selected, err := cache.NewResource[*corev1.ConfigMap](c, configMapsGVR, cache.Selector(payments))
	require.NoError(t, err)
	teams, err := cache.NewResource[*corev1.ConfigMap](c, configMapsGVR, cache.Selector(anyTeam))
	require.NoError(t, err)
	all := configMaps(t, c)
	added := &nameLog{}
	require.NoError(t, selected.AddEventHandler(added))
	require.NoError(t, teams.AddEventHandler(&nameLog{}))
	require.NoError(t, all.AddEventHandler(&nameLog{}))
	require.NoError(t, c.Start(t.Context()))
	require.Eventually(t, c.HasSynced, 30*time.Second, 10*time.Millisecond)

	_, err = selected.Get(t.Context(), types.NamespacedName{Namespace: "shop", Name: "pay"})
	require.NoError(t, err)
	_, err = selected.Get(t.Context(), types.NamespacedName{Namespace: "shop", Name: "web"})
	require.ErrorIs(t, err, ports.ErrNotFound, "another team's is not cached there")
	listed, err := selected.List(t.Context(), "shop")
	require.NoError(t, err)
	require.Len(t, listed, 1)
	assert.Equal(t, "pay", listed[0].Name)
	_, err = all.Get(t.Context(), types.NamespacedName{Namespace: "shop", Name: "loose"})
	require.NoError(t, err, "the unselected resource holds every one")

	_, err = client.CoreV1().ConfigMaps("shop").Create(t.Context(), labeled("shop", "refund", "payments"), metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = client.CoreV1().ConfigMaps("shop").Create(t.Context(), labeled("shop", "cart", "frontend"), metav1.CreateOptions{})
	require.NoError(t, err)
	require.EventuallyWithT(t, func(t *assert.CollectT) {
		assert.Equal(t, []string{"add shop/pay", "add shop/refund"}, added.get())
	}, 30*time.Second, 10*time.Millisecond, "the watch is narrowed too")

	lists := map[string]int{}
	for _, a := range client.Actions() {
		if l, ok := a.(k8stesting.ListAction); ok && a.GetResource() == configMapsGVR {
			lists[l.GetListRestrictions().Labels.String()]++
		}
	}
	assert.Equal(t, map[string]int{"team=payments": 1, "team": 1, "": 1}, lists, "one informer, one list per selector")
	again, err := cache.NewResource[*corev1.ConfigMap](c, configMapsGVR, cache.Selector(payments))
	require.NoError(t, err, "asked for alike, it is shared")
	_, err = again.Get(t.Context(), types.NamespacedName{Namespace: "shop", Name: "refund"})
	require.NoError(t, err)
	_, err = cache.NewMetadataResource(c, configMapsGVR, "ConfigMap", cache.Selector(payments))
	require.ErrorContains(t, err, "kind ConfigMap[team=payments] is already cached as typed:/v1, Resource=configmaps")
	everything, err := cache.NewResource[*corev1.ConfigMap](c, configMapsGVR, cache.Selector(labels.Everything()))
	require.NoError(t, err, "an empty selector is none")
	_, err = everything.Get(t.Context(), types.NamespacedName{Namespace: "shop", Name: "loose"})
	require.NoError(t, err)

	families, err := reg.Gather()
	require.NoError(t, err)
	counts := map[string]float64{}
	for _, f := range families {
		if f.GetName() != "operator_cache_objects" {
			continue
		}
		for _, m := range f.GetMetric() {
			l := map[string]string{}
			for _, p := range m.GetLabel() {
				l[p.GetName()] = p.GetValue()
			}
			counts[l["kind"]+" "+l["selector"]] = m.GetGauge().GetValue()
		}
	}
	assert.Equal(t, map[string]float64{"ConfigMap team=payments": 2, "ConfigMap team": 4, "ConfigMap ": 5}, counts)
}

// A typed trim runs in the informer's transform, before the cache holds
// the object, with the cache's own (managedFields stripped); a resource
// of another type, a nil option and a trim without a function are refused.
func TestTrimOfTrimsTypedObjects(t *testing.T) {
	t.Parallel()
	client := fake.NewClientset(configMap("shop", "a"))
	c := resourceCache(t, client, nil, cache.Options{})
	noData := cache.TrimOf("without data", func(cm *corev1.ConfigMap) { cm.Data = nil })
	r, err := cache.NewResource[*corev1.ConfigMap](c, configMapsGVR, noData, cache.WithoutAnnotations)
	require.NoError(t, err)
	require.NoError(t, c.Start(t.Context()))

	got, err := r.Get(t.Context(), types.NamespacedName{Namespace: "shop", Name: "a"})
	require.NoError(t, err)
	assert.Nil(t, got.Data)
	assert.Nil(t, got.Annotations)
	assert.Nil(t, got.ManagedFields)
	assert.Equal(t, "a", got.Name, "the rest stays")

	_, err = cache.NewResource[*corev1.ConfigMap](c, configMapsGVR)
	require.ErrorContains(t, err, "already cached as typed without data without annotations")
	_, err = cache.NewResource[*corev1.Secret](c, corev1.SchemeGroupVersion.WithResource("secrets"), noData)
	require.ErrorContains(t, err, `trim "without data" is for *v1.ConfigMap, not *v1.Secret`)
	_, err = cache.NewResource[*corev1.Secret](c, corev1.SchemeGroupVersion.WithResource("secrets"), nil)
	require.ErrorContains(t, err, "a nil option")
	_, err = cache.NewResource[*corev1.Secret](c, corev1.SchemeGroupVersion.WithResource("secrets"), cache.Trim{})
	require.ErrorContains(t, err, "does nothing")
}

// The readiness check names a selected informer with its selector.
func TestSelectedReadinessNamesTheSelector(t *testing.T) {
	t.Parallel()
	client := fake.NewClientset()
	release := make(chan struct{})
	client.PrependReactor("list", "configmaps", func(k8stesting.Action) (bool, runtime.Object, error) {
		<-release
		return false, nil, nil
	})
	c := resourceCache(t, client, nil, cache.Options{})
	sel, err := labels.Parse("team=payments")
	require.NoError(t, err)
	r, err := cache.NewResource[*corev1.ConfigMap](c, configMapsGVR, cache.Selector(sel))
	require.NoError(t, err)
	require.NoError(t, r.AddEventHandler(&nameLog{}))
	require.NoError(t, c.Start(t.Context()))

	assert.ErrorContains(t, c.Check(t.Context()), "informers not synced: ConfigMap[team=payments]")
	close(release)
	require.Eventually(t, c.HasSynced, 30*time.Second, 10*time.Millisecond)
}
