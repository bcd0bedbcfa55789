package cache_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zaptest"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/hexagonal-operator/operator/internal/adapters/cache"
	"github.com/hexagonal-operator/operator/internal/ports"
	"github.com/hexagonal-operator/operator/test/controlplane"
)

// TestOnAPIServer proves the cache's promises against a real API server,
// which (unlike the fakes) writes managedFields, enforces RBAC per
// namespace, and serves metadata-only lists and watches.
func TestOnAPIServer(t *testing.T) {
	t.Parallel()
	cp := controlplane.StartT(t, controlplane.Options{})
	admin := cp.Clientset()

	t.Run("managedFields are stripped", func(t *testing.T) {
		t.Parallel()
		ns := namespace(t, cp, "strip")
		rs := createReplicaSet(t, admin, ns, "web")
		createPod(t, admin, ns, "web-1", rs)
		require.NotEmpty(t, rs.ManagedFields, "the server records managedFields")
		c := startCache(t, cp.Config, cache.Options{})

		got := eventuallyGet(t, c, types.NamespacedName{Namespace: ns, Name: "web"})
		assert.Nil(t, got.ManagedFields)
		assert.Equal(t, rs.Labels, got.Labels)
		pods := eventuallyPods(t, c, ns, "web", 1)
		assert.Nil(t, pods[0].ManagedFields)
	})

	t.Run("managedFields kept on request", func(t *testing.T) {
		t.Parallel()
		ns := namespace(t, cp, "keep")
		createReplicaSet(t, admin, ns, "web")
		c := startCache(t, cp.Config, cache.Options{KeepManagedFields: true})

		assert.NotEmpty(t, eventuallyGet(t, c, types.NamespacedName{Namespace: ns, Name: "web"}).ManagedFields)
	})

	t.Run("one namespace only, with namespace-scoped permissions", func(t *testing.T) {
		t.Parallel()
		mine, other := namespace(t, cp, "mine"), namespace(t, cp, "other")
		// An identity that may read only in mine: a cache that listed or
		// watched cluster-wide would never sync.
		cfg := namespaceReader(t, cp, mine)
		createReplicaSet(t, admin, other, "web")
		createReplicaSet(t, admin, mine, "web")
		c := startCache(t, cfg, cache.Options{Namespace: mine})
		rss := &handler{}
		require.NoError(t, rsOf(t, c).AddEventHandler(rss))
		require.NoError(t, podsOf(t, c).AddEventHandler(&handler{}))

		waitSynced(t, c)
		eventuallyGet(t, c, types.NamespacedName{Namespace: mine, Name: "web"})
		_, err := rsOf(t, c).Get(t.Context(), types.NamespacedName{Namespace: other, Name: "web"})
		assert.ErrorIs(t, err, ports.ErrNotFound)
		createReplicaSet(t, admin, other, "later")
		createReplicaSet(t, admin, mine, "later")
		require.EventuallyWithT(t, func(t *assert.CollectT) {
			assert.ElementsMatch(t, []string{mine + "/web", mine + "/later"}, rss.addedNames())
		}, waitFor, tick)
	})

	t.Run("pods are metadata only", func(t *testing.T) {
		t.Parallel()
		ns := namespace(t, cp, "pods")
		web := createReplicaSet(t, admin, ns, "web")
		api := createReplicaSet(t, admin, ns, "api")
		c := startCache(t, cp.Config, cache.Options{})
		pods := &handler{}
		require.NoError(t, podsOf(t, c).AddEventHandler(pods))
		waitSynced(t, c)

		createPod(t, admin, ns, "web-b", web)
		createPod(t, admin, ns, "web-a", web)
		createPod(t, admin, ns, "api-1", api)
		createPod(t, admin, ns, "loner", nil)

		got := eventuallyPods(t, c, ns, "web", 2)
		assert.Equal(t, "web-a", got[0].Name)
		assert.Equal(t, "web-b", got[1].Name)
		assert.Len(t, eventuallyPods(t, c, ns, "api", 1), 1)
		require.EventuallyWithT(t, func(t *assert.CollectT) {
			var names []string
			for _, o := range pods.addedObjects() {
				assert.IsType(t, &metav1.PartialObjectMetadata{}, o, "pods arrive as metadata")
				if o.GetNamespace() == ns { // the cache sees every namespace
					names = append(names, o.GetName())
				}
			}
			assert.ElementsMatch(t, []string{"web-a", "web-b", "api-1", "loner"}, names)
		}, waitFor, tick)

		require.NoError(t, admin.CoreV1().Pods(ns).Delete(t.Context(), "web-b", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}))
		eventuallyPods(t, c, ns, "web", 1)
		require.EventuallyWithT(t, func(t *assert.CollectT) {
			pods.mu.Lock()
			defer pods.mu.Unlock()
			var deleted []string
			for _, o := range pods.deleted {
				if o.GetNamespace() == ns {
					deleted = append(deleted, o.GetName())
				}
			}
			assert.Equal(t, []string{"web-b"}, deleted)
		}, waitFor, tick)
	})

	t.Run("replicaset events reach handlers", func(t *testing.T) {
		t.Parallel()
		ns := namespace(t, cp, "events")
		c := startCache(t, cp.Config, cache.Options{})
		rec := &eventLog{}
		require.NoError(t, rsOf(t, c).AddEventHandler(rec))
		waitSynced(t, c)

		createReplicaSet(t, admin, ns, "web")
		_, err := admin.AppsV1().ReplicaSets(ns).Patch(t.Context(), "web", types.MergePatchType,
			[]byte(`{"metadata":{"labels":{"hello":"world"}}}`), metav1.PatchOptions{})
		require.NoError(t, err)
		require.NoError(t, admin.AppsV1().ReplicaSets(ns).Delete(t.Context(), "web", metav1.DeleteOptions{}))

		require.EventuallyWithT(t, func(t *assert.CollectT) {
			assert.Equal(t, []string{"add web", "update web hello=world", "delete web"}, rec.lines(ns))
		}, waitFor, tick)
	})

	t.Run("freshness: a write is applied once its resourceVersion is", func(t *testing.T) {
		t.Parallel()
		ns := namespace(t, cp, "fresh")
		c := startCache(t, cp.Config, cache.Options{Namespace: ns})
		rsSource, podSource := rsOf(t, c), podsOf(t, c)
		require.NoError(t, rsSource.AddEventHandler(&handler{}))
		require.NoError(t, podSource.AddEventHandler(&handler{}))
		waitSynced(t, c)
		rsFresh, podFresh := rsSource, podSource

		rs := createReplicaSet(t, admin, ns, "web")
		for i := range 20 {
			patched, err := admin.AppsV1().ReplicaSets(ns).Patch(t.Context(), "web", types.MergePatchType,
				fmt.Appendf(nil, `{"metadata":{"labels":{"round":"%d"}}}`, i), metav1.PatchOptions{})
			require.NoError(t, err)
			require.Eventually(t, func() bool { return rsFresh.HasApplied(patched.ResourceVersion) }, waitFor, time.Millisecond)
			// Applied means readable: no read after it returns the state
			// from before the write.
			got, err := rsOf(t, c).Get(t.Context(), types.NamespacedName{Namespace: ns, Name: "web"})
			require.NoError(t, err)
			require.Equal(t, fmt.Sprint(i), got.Labels["round"])
		}
		createPod(t, admin, ns, "web-1", rs)
		pod, err := admin.CoreV1().Pods(ns).Get(t.Context(), "web-1", metav1.GetOptions{})
		require.NoError(t, err)
		require.Eventually(t, func() bool { return podFresh.HasApplied(pod.ResourceVersion) }, waitFor, time.Millisecond)
		assert.Len(t, eventuallyPods(t, c, ns, "web", 1), 1)

		future := fmt.Sprint(mustUint(t, pod.ResourceVersion) + 1_000_000)
		assert.False(t, podFresh.HasApplied(future), "a version the store has not reached")
		assert.False(t, rsFresh.HasApplied(future))
		assert.True(t, rsFresh.HasApplied("not-a-number"), "versions that do not compare never block")
	})

	t.Run("resources of any listable kind of the typed groups", func(t *testing.T) {
		t.Parallel()
		ns, other := namespace(t, cp, "resources"), namespace(t, cp, "resources-other")
		for _, n := range []string{ns, other} {
			_, err := admin.CoreV1().ConfigMaps(n).Create(t.Context(), &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Name: "settings"}, Data: map[string]string{"color": "blue"},
			}, metav1.CreateOptions{})
			require.NoError(t, err)
		}
		createDeployment(t, admin, ns, "web")
		c := startCache(t, cp.Config, cache.Options{Namespace: ns})
		configMaps, err := cache.NewResource[*corev1.ConfigMap](c, corev1.SchemeGroupVersion.WithResource("configmaps"))
		require.NoError(t, err)
		deployments, err := cache.NewResource[*appsv1.Deployment](c, appsv1.SchemeGroupVersion.WithResource("deployments"))
		require.NoError(t, err)
		namespaces, err := cache.NewResource[*corev1.Namespace](c, corev1.SchemeGroupVersion.WithResource("namespaces"))
		require.NoError(t, err)
		added := &handler{}
		require.NoError(t, configMaps.AddEventHandler(added))

		cm, err := configMaps.Get(t.Context(), types.NamespacedName{Namespace: ns, Name: "settings"})
		require.NoError(t, err)
		assert.Equal(t, map[string]string{"color": "blue"}, cm.Data)
		assert.Nil(t, cm.ManagedFields)
		_, err = configMaps.Get(t.Context(), types.NamespacedName{Namespace: other, Name: "settings"})
		assert.ErrorIs(t, err, ports.ErrNotFound, "outside Options.Namespace")
		d, err := deployments.Get(t.Context(), types.NamespacedName{Namespace: ns, Name: "web"})
		require.NoError(t, err)
		assert.Equal(t, map[string]string{"app": "web"}, d.Spec.Selector.MatchLabels)
		assert.Nil(t, d.ManagedFields)
		// Namespaces are cluster-scoped: all of them, whatever Options.Namespace.
		n, err := namespaces.Get(t.Context(), types.NamespacedName{Name: other})
		require.NoError(t, err)
		assert.Equal(t, other, n.Name)
		waitSynced(t, c)

		_, err = admin.CoreV1().ConfigMaps(ns).Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "later"}}, metav1.CreateOptions{})
		require.NoError(t, err)
		require.EventuallyWithT(t, func(t *assert.CollectT) {
			assert.Equal(t, []string{ns + "/settings", ns + "/later"}, added.addedNames())
		}, waitFor, tick)
	})

	// The cache knows without discovery which kinds have no namespace and
	// which resource serves a kind: hold that against the server's word,
	// for every listable kind of the typed groups.
	t.Run("scopes and resource names are the server's", func(t *testing.T) {
		t.Parallel()
		groupVersions := map[schema.GroupVersion]bool{}
		for gvk := range scheme.Scheme.AllKnownTypes() {
			if gvk.Version != runtime.APIVersionInternal && cache.Typed(gvk.GroupVersion()) {
				groupVersions[gvk.GroupVersion()] = true
			}
		}
		checked := map[schema.GroupKind]bool{}
		for gv := range groupVersions {
			resources, err := admin.Discovery().ServerResourcesForGroupVersion(gv.String())
			require.NoError(t, err, gv)
			for _, r := range resources.APIResources {
				gvk := gv.WithKind(r.Kind)
				if strings.Contains(r.Name, "/") || !slices.Contains(r.Verbs, "list") || !slices.Contains(r.Verbs, "watch") ||
					!scheme.Scheme.Recognizes(gvk) || !scheme.Scheme.Recognizes(gv.WithKind(r.Kind+"List")) {
					continue
				}
				plural, _ := meta.UnsafeGuessKindToResource(gvk)
				assert.Equal(t, r.Name, plural.Resource, "the resource of %s", gvk)
				assert.Equal(t, !r.Namespaced, cache.ClusterScoped[gvk.GroupKind()], "%s is cluster-scoped", gvk)
				checked[gvk.GroupKind()] = true
			}
		}
		assert.Subset(t, keys(checked), []schema.GroupKind{{Kind: "ConfigMap"}, {Kind: "Namespace"}, {Group: "apps", Kind: "Deployment"},
			{Group: "admissionregistration.k8s.io", Kind: "ValidatingWebhookConfiguration"}})
		for gk := range cache.ClusterScoped {
			assert.True(t, checked[gk] || !scheme.Scheme.Recognizes(schema.GroupVersionKind{Group: gk.Group, Version: "v1", Kind: gk.Kind}),
				"%s is served in v1 but was not checked", gk)
		}
	})

	t.Run("sync gate", func(t *testing.T) {
		t.Parallel()
		ns := namespace(t, cp, "sync")
		for i := range 20 {
			createReplicaSet(t, admin, ns, fmt.Sprint("rs-", i))
		}
		c := newRealCache(t, cp.Config, cache.Options{Namespace: ns})
		require.NoError(t, rsOf(t, c).AddEventHandler(&handler{}))
		assert.False(t, c.HasSynced(), "not before Start")
		require.NoError(t, c.Start(t.Context()))

		waitSynced(t, c)
		// Synced means listed: every object is there at once, no waiting.
		for i := range 20 {
			_, err := rsOf(t, c).Get(t.Context(), types.NamespacedName{Namespace: ns, Name: fmt.Sprint("rs-", i)})
			require.NoError(t, err)
		}
	})

	t.Run("a selected typed resource holds only its objects, trimmed", func(t *testing.T) {
		t.Parallel()
		ns := namespace(t, cp, "selected")
		podsGVR := corev1.SchemeGroupVersion.WithResource("pods")
		c := startCache(t, cp.Config, cache.Options{})
		sel, err := labels.Parse("chosen")
		require.NoError(t, err)
		noSpec := cache.TrimOf("without spec", func(p *corev1.Pod) { p.Spec = corev1.PodSpec{} })
		chosen, err := cache.NewResource[*corev1.Pod](c, podsGVR, cache.Selector(sel), noSpec)
		require.NoError(t, err)
		seen := &eventLog{}
		require.NoError(t, chosen.AddEventHandler(seen))
		require.NoError(t, podsOf(t, c).AddEventHandler(&handler{}), "every Pod's metadata beside it")
		waitSynced(t, c)

		pods := admin.CoreV1().Pods(ns)
		for name, l := range map[string]map[string]string{"in": {"chosen": "yes"}, "out": nil} {
			_, err := pods.Create(t.Context(), &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: l}, Spec: podSpec()}, metav1.CreateOptions{})
			require.NoError(t, err)
		}
		in := types.NamespacedName{Namespace: ns, Name: "in"}
		require.EventuallyWithT(t, func(ct *assert.CollectT) {
			_, err := chosen.Get(t.Context(), in)
			assert.NoError(ct, err)
		}, waitFor, tick)
		got, err := chosen.Get(t.Context(), in)
		require.NoError(t, err)
		assert.Empty(t, got.Spec.Containers, "trimmed")
		assert.Equal(t, corev1.PodPending, got.Status.Phase, "typed: the status is there")
		_, err = chosen.Get(t.Context(), types.NamespacedName{Namespace: ns, Name: "out"})
		require.ErrorIs(t, err, ports.ErrNotFound, "an unselected Pod is not held")
		_, err = podsOf(t, c).Get(t.Context(), types.NamespacedName{Namespace: ns, Name: "out"})
		require.NoError(t, err, "the unselected informer holds it")

		// Losing the label is leaving the cache; getting it back, coming back.
		relabel := func(l map[string]string) {
			p, err := pods.Get(t.Context(), "in", metav1.GetOptions{})
			require.NoError(t, err)
			p.Labels = l
			_, err = pods.Update(t.Context(), p, metav1.UpdateOptions{})
			require.NoError(t, err)
		}
		relabel(nil)
		require.EventuallyWithT(t, func(ct *assert.CollectT) {
			_, err := chosen.Get(t.Context(), in)
			assert.ErrorIs(ct, err, ports.ErrNotFound)
		}, waitFor, tick, "a Pod that stops matching leaves")
		relabel(map[string]string{"chosen": "again"})
		require.EventuallyWithT(t, func(ct *assert.CollectT) {
			assert.Equal(ct, []string{"add in", "delete in", "add in"}, seen.lines(ns))
		}, waitFor, tick)
	})
}

func keys[K comparable, V any](m map[K]V) []K {
	out := make([]K, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

func mustUint(t *testing.T, s string) uint64 {
	t.Helper()
	v, err := strconv.ParseUint(s, 10, 64)
	require.NoError(t, err)
	return v
}

func newRealCache(t *testing.T, cfg *rest.Config, opts cache.Options) *cache.Cache {
	t.Helper()
	httpClient, err := rest.HTTPClientFor(cfg)
	require.NoError(t, err)
	client, err := kubernetes.NewForConfigAndClient(cfg, httpClient)
	require.NoError(t, err)
	meta, err := metadata.NewForConfig(cfg)
	require.NoError(t, err)
	c, err := cache.New(client, meta, nil, zaptest.NewLogger(t), opts)
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitFor)
		defer cancel()
		assert.NoError(t, c.Stop(ctx))
	})
	return c
}

func startCache(t *testing.T, cfg *rest.Config, opts cache.Options) *cache.Cache {
	t.Helper()
	c := newRealCache(t, cfg, opts)
	require.NoError(t, c.Start(t.Context()))
	return c
}

func waitSynced(t *testing.T, c *cache.Cache) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), waitFor)
	defer cancel()
	require.NoError(t, c.WaitForSync(ctx))
}

func eventuallyGet(t *testing.T, c *cache.Cache, key types.NamespacedName) *appsv1.ReplicaSet {
	t.Helper()
	var rs *appsv1.ReplicaSet
	require.EventuallyWithT(t, func(ct *assert.CollectT) {
		var err error
		rs, err = rsOf(t, c).Get(t.Context(), key)
		assert.NoError(ct, err)
	}, waitFor, tick, "cache has %s", key)
	return rs
}

// eventuallyPods waits until the cache holds n Pods controlled by the
// ReplicaSet owner in ns, as a handler added now sees them, and returns
// them by name.
func eventuallyPods(t *testing.T, c *cache.Cache, ns, owner string, n int) []*metav1.PartialObjectMetadata {
	t.Helper()
	h := &podSet{pods: map[string]*metav1.PartialObjectMetadata{}}
	require.NoError(t, podsOf(t, c).AddEventHandler(h))
	var pods []*metav1.PartialObjectMetadata
	require.EventuallyWithT(t, func(ct *assert.CollectT) {
		pods = h.controlledBy(ns, owner)
		assert.Len(ct, pods, n)
	}, waitFor, tick, "%d pods of %s/%s", n, ns, owner)
	return pods
}

// podSet holds the Pods a source has announced and not deleted.
type podSet struct {
	mu   sync.Mutex
	pods map[string]*metav1.PartialObjectMetadata
}

func (p *podSet) OnAdd(obj any, _ bool)  { p.set(objectOf(obj)) }
func (p *podSet) OnUpdate(_, newObj any) { p.set(objectOf(newObj)) }
func (p *podSet) OnDelete(obj any) {
	o := objectOf(obj)
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.pods, o.GetNamespace()+"/"+o.GetName())
}

func (p *podSet) set(o metav1.Object) {
	if pod, ok := o.(*metav1.PartialObjectMetadata); ok {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.pods[o.GetNamespace()+"/"+o.GetName()] = pod
	}
}

// controlledBy lists, by name, the Pods in ns whose controller is the
// ReplicaSet owner.
func (p *podSet) controlledBy(ns, owner string) []*metav1.PartialObjectMetadata {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []*metav1.PartialObjectMetadata
	for _, pod := range p.pods {
		if ref := metav1.GetControllerOfNoCopy(pod); pod.Namespace == ns && ref != nil && ref.Kind == "ReplicaSet" && ref.Name == owner {
			out = append(out, pod)
		}
	}
	slices.SortFunc(out, func(a, b *metav1.PartialObjectMetadata) int { return strings.Compare(a.Name, b.Name) })
	return out
}

var nsCount struct {
	sync.Mutex
	n int
}

func namespace(t *testing.T, cp *controlplane.ControlPlane, prefix string) string {
	t.Helper()
	nsCount.Lock()
	nsCount.n++
	name := fmt.Sprintf("%s-%d", prefix, nsCount.n)
	nsCount.Unlock()
	require.NoError(t, cp.EnsureNamespace(t.Context(), name))
	return name
}

func createReplicaSet(t *testing.T, client kubernetes.Interface, ns, name string) *appsv1.ReplicaSet {
	t.Helper()
	sel := map[string]string{"app": name}
	rs, err := client.AppsV1().ReplicaSets(ns).Create(t.Context(), &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: sel},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: new(int32),
			Selector: &metav1.LabelSelector{MatchLabels: sel},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: sel}, Spec: podSpec()},
		},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	return rs
}

func createDeployment(t *testing.T, client kubernetes.Interface, ns, name string) {
	t.Helper()
	sel := map[string]string{"app": name}
	_, err := client.AppsV1().Deployments(ns).Create(t.Context(), &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: new(int32),
			Selector: &metav1.LabelSelector{MatchLabels: sel},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: sel}, Spec: podSpec()},
		},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
}

func createPod(t *testing.T, client kubernetes.Interface, ns, name string, owner *appsv1.ReplicaSet) {
	t.Helper()
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: podSpec()}
	if owner != nil {
		p.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(owner, appsv1.SchemeGroupVersion.WithKind("ReplicaSet"))}
	}
	_, err := client.CoreV1().Pods(ns).Create(t.Context(), p, metav1.CreateOptions{})
	require.NoError(t, err)
}

func podSpec() corev1.PodSpec {
	return corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}}}
}

// namespaceReader returns a ServiceAccount's client configuration that may
// list and watch ReplicaSets and Pods in ns and nothing else.
func namespaceReader(t *testing.T, cp *controlplane.ControlPlane, ns string) *rest.Config {
	t.Helper()
	admin := cp.Clientset()
	_, err := admin.RbacV1().Roles(ns).Create(t.Context(), &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "reader"},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{"apps"}, Resources: []string{"replicasets"}, Verbs: []string{"get", "list", "watch"}},
			{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list", "watch"}},
		},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = admin.RbacV1().RoleBindings(ns).Create(t.Context(), &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "reader"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "reader"},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: ns, Name: "reader"}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	cfg, err := cp.ServiceAccountConfig(t.Context(), ns, "reader")
	require.NoError(t, err)
	return cfg
}

// eventLog writes down events as lines.
type eventLog struct {
	mu  sync.Mutex
	log []struct{ ns, line string }
}

func (e *eventLog) OnAdd(obj any, _ bool) {
	o := objectOf(obj)
	e.add(o, "add "+o.GetName())
}
func (e *eventLog) OnUpdate(_, newObj any) {
	n := objectOf(newObj)
	e.add(n, "update "+n.GetName()+" hello="+n.GetLabels()["hello"])
}
func (e *eventLog) OnDelete(obj any) {
	o := objectOf(obj)
	e.add(o, "delete "+o.GetName())
}
func (e *eventLog) add(o metav1.Object, line string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.log = append(e.log, struct{ ns, line string }{o.GetNamespace(), line})
}
func (e *eventLog) lines(ns string) []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []string
	for _, l := range e.log {
		if l.ns == ns {
			out = append(out, l.line)
		}
	}
	return out
}
