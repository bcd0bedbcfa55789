package cache

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/hexagonal-operator/operator/internal/kubeclient"
	"github.com/hexagonal-operator/operator/internal/ports"
)

// Object is a typed Kubernetes object, such as *corev1.ConfigMap: what a
// [Resource] holds.
type Object interface {
	metav1.Object
	runtime.Object
}

// Resource is the cache of one built-in resource, for a controller of a kind
// the cache has no methods of its own for: the kind's ports.Source and its
// ports.ObjectReader[T]. Build it with [NewResource].
//
// Its informer is one of the cache's, so it shares everything with the
// rest of it: the namespace restriction, the managedFields stripping,
// laziness, readiness and operator_cache_objects, where the resource
// appears under its path (for example kind="v1/configmaps") rather than its
// kind.
type Resource[T Object] struct {
	// source serves AddEventHandler and HasApplied under the informer's
	// name in the cache, the resource's path; Kind is overridden.
	*source
	kind string
}

var (
	_ ports.Source                          = (*Resource[*corev1.ConfigMap])(nil)
	_ ports.ObjectReader[*corev1.ConfigMap] = (*Resource[*corev1.ConfigMap])(nil)
	_ ports.CacheFreshness                  = (*Resource[*corev1.ConfigMap])(nil)
)

// NewResource returns the cache of gvr, whose objects are of type T (for
// example NewResource[*corev1.ConfigMap](c, corev1.SchemeGroupVersion.WithResource("configmaps"))).
// It starts nothing: the informer exists once a handler is added or an
// object read.
//
// The resource must be one the cache's client can list as T: on a
// *kubeclient.Clientset, any listable kind of a group in kubeclient.Scheme
// served under its usual resource name (configmaps, deployments,
// namespaces, ...); on another kubeclient.Interface, such as a test's
// fake, a kind the interface has a client for. Anything else is refused
// here. ReplicaSets have their own methods ([Cache.ReplicaSets],
// [Cache.GetReplicaSet]), which share one informer with any other typed
// view of them, so they are refused too.
func NewResource[T Object](c *Cache, gvr schema.GroupVersionResource) (*Resource[T], error) {
	if c == nil {
		return nil, errors.New("cache resource: a cache is required")
	}
	if gvr.Version == "" || gvr.Resource == "" {
		return nil, fmt.Errorf("cache resource %q: version and resource are required", gvr.String())
	}
	if gvr == appsv1.SchemeGroupVersion.WithResource("replicasets") {
		return nil, errors.New("cache resource apps/v1/replicasets: use Cache.ReplicaSets and Cache.GetReplicaSet")
	}
	key := resourceKey(gvr)
	typ := reflect.TypeFor[T]()
	if typ.Kind() != reflect.Pointer || typ.Elem().Kind() != reflect.Struct {
		return nil, fmt.Errorf("cache resource %s: %s is not a pointer to an API type", key, typ)
	}
	var (
		kind string
		lw   *toolscache.ListWatch
		err  error
	)
	if rc, ok := c.client.(restClients); ok {
		kind, lw, err = restListWatch[T](rc, gvr, c.namespace)
	} else {
		kind, lw, err = typedListWatch(c.client, gvr, typ, c.namespace)
	}
	if err != nil {
		return nil, fmt.Errorf("cache resource %s: %w", key, err)
	}
	build := func() toolscache.SharedIndexInformer {
		return newInformer(c.logger, key, lw, c.client, newObject[T](), nil)
	}
	return &Resource[T]{source: &source{cache: c, kind: key, build: build}, kind: kind}, nil
}

// Kind implements ports.Source: the kind, for example "ConfigMap".
func (r *Resource[T]) Kind() string { return r.kind }

// GetObject implements ports.ObjectReader[T] from the resource's informer,
// waiting for it to sync first (at most until ctx is done). The object is
// shared with the cache: do not mutate it. An object that does not exist,
// or lives outside Options.Namespace, is ports.ErrNotFound.
func (r *Resource[T]) GetObject(ctx context.Context, key types.NamespacedName) (T, error) {
	var zero T
	what := strings.ToLower(r.kind)
	inf, err := r.cache.syncedInformer(ctx, r.source.kind, r.build)
	if err != nil {
		return zero, fmt.Errorf("read %s %s from cache: %w", what, key, err)
	}
	obj, ok, err := inf.GetIndexer().GetByKey(toolscache.ObjectName(key).String())
	if err != nil {
		return zero, fmt.Errorf("read %s %s from cache: %w", what, key, err)
	}
	if !ok {
		return zero, fmt.Errorf("%s %s: %w", what, key, ports.ErrNotFound)
	}
	t, ok := obj.(T)
	if !ok {
		return zero, fmt.Errorf("read %s %s from cache: the informer holds %T, not %T", what, key, obj, zero)
	}
	return t, nil
}

// resourceKey names a resource's informer by its path, group first, so
// that it cannot be mistaken for the kinds the cache serves itself, which
// have no slash.
func resourceKey(gvr schema.GroupVersionResource) string {
	return gvr.GroupVersion().String() + "/" + gvr.Resource
}

// newObject is an empty T, a pointer to an API struct (NewResource checks).
func newObject[T Object]() T {
	return reflect.New(reflect.TypeFor[T]().Elem()).Interface().(T)
}

// restClients is *kubeclient.Clientset: a REST client per group version
// of kubeclient.Scheme, which decodes (protobuf or JSON) into the scheme's
// types.
type restClients interface {
	RESTClientFor(gv schema.GroupVersion) rest.Interface
}

var _ restClients = (*kubeclient.Clientset)(nil)

// clusterScoped are the kinds of kubeclient.Scheme's groups that an
// informer can list and watch and that live outside namespaces
// (+genclient:nonNamespaced in k8s.io/api): they are listed without the
// cache's namespace. Without discovery nothing else says so, so extend it
// when kubeclient gains a group; an integration test holds it against the
// API server's discovery.
var clusterScoped = map[schema.GroupKind]bool{
	{Kind: "Namespace"}:        true,
	{Kind: "Node"}:             true,
	{Kind: "PersistentVolume"}: true,
	{Group: "admissionregistration.k8s.io", Kind: "MutatingWebhookConfiguration"}:     true,
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingWebhookConfiguration"}:   true,
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingAdmissionPolicy"}:        true,
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingAdmissionPolicyBinding"}: true,
	{Group: "admissionregistration.k8s.io", Kind: "MutatingAdmissionPolicy"}:          true,
	{Group: "admissionregistration.k8s.io", Kind: "MutatingAdmissionPolicyBinding"}:   true,
}

// restListWatch lists and watches gvr as T through the REST client of its
// group version, as the typed clients do (protobuf preferred).
// T must be the kind of gvr in kubeclient.Scheme, which names the list
// type to decode into ("<Kind>List"). Which resource serves a kind is
// guessed from its name, as the API server names its built-in resources;
// a resource that is not T's kind is refused rather than an informer that
// never syncs.
func restListWatch[T Object](clients restClients, gvr schema.GroupVersionResource, namespace string) (string, *toolscache.ListWatch, error) {
	gv := gvr.GroupVersion()
	rc := clients.RESTClientFor(gv)
	if rc == nil {
		return "", nil, fmt.Errorf("%s is not a group of kubeclient's scheme", gv)
	}
	example := newObject[T]()
	gvks, _, err := kubeclient.Scheme.ObjectKinds(example)
	if err != nil {
		return "", nil, fmt.Errorf("%T is not a type of kubeclient's scheme: %w", example, err)
	}
	i := slices.IndexFunc(gvks, func(gvk schema.GroupVersionKind) bool { return gvk.GroupVersion() == gv })
	if i < 0 {
		return "", nil, fmt.Errorf("%T is not a kind of %s", example, gv)
	}
	gvk := gvks[i]
	if plural, _ := meta.UnsafeGuessKindToResource(gvk); plural.Resource != gvr.Resource {
		return "", nil, fmt.Errorf("%s objects are %s, not %s", gvk.Kind, plural.Resource, gvr.Resource)
	}
	listKind := gv.WithKind(gvk.Kind + "List")
	list, err := kubeclient.Scheme.New(listKind)
	if err != nil {
		return "", nil, fmt.Errorf("%s cannot be listed: %w", gvk.Kind, err)
	}
	listType := reflect.TypeOf(list).Elem()
	newList := func() runtime.Object { return reflect.New(listType).Interface().(runtime.Object) }
	if clusterScoped[gvk.GroupKind()] {
		namespace = ""
	}
	client := kubeclient.NewResourceClient[T, runtime.Object](rc, gvr.Resource, namespace, newObject[T], newList)
	return gvk.Kind, listWatch[runtime.Object](client), nil
}

// typedKind is a kind kubeclient.Interface has a typed client for.
type typedKind struct {
	typ reflect.Type
	// listWatch lists and watches in namespace, or in all namespaces when
	// it is empty; cluster-scoped kinds ignore it.
	listWatch func(client kubeclient.Interface, namespace string) *toolscache.ListWatch
}

func typed[T Object, L runtime.Object](client func(kubeclient.Interface, string) kubeclient.Resource[T, L]) typedKind {
	return typedKind{
		typ:       reflect.TypeFor[T](),
		listWatch: func(c kubeclient.Interface, ns string) *toolscache.ListWatch { return listWatch(client(c, ns)) },
	}
}

// typedKinds serve clients without REST clients per group (fakes, in
// tests): only the kinds kubeclient.Interface has clients for. ReplicaSets
// are the cache's own.
var typedKinds = map[schema.GroupVersionResource]typedKind{
	corev1.SchemeGroupVersion.WithResource("pods"): typed(func(c kubeclient.Interface, ns string) kubeclient.PodInterface {
		return c.CoreV1().Pods(ns)
	}),
	corev1.SchemeGroupVersion.WithResource("secrets"): typed(func(c kubeclient.Interface, ns string) kubeclient.SecretInterface {
		return c.CoreV1().Secrets(ns)
	}),
	corev1.SchemeGroupVersion.WithResource("configmaps"): typed(func(c kubeclient.Interface, ns string) kubeclient.ConfigMapInterface {
		return c.CoreV1().ConfigMaps(ns)
	}),
	coordinationv1.SchemeGroupVersion.WithResource("leases"): typed(func(c kubeclient.Interface, ns string) kubeclient.LeaseInterface {
		return c.CoordinationV1().Leases(ns)
	}),
	eventsv1.SchemeGroupVersion.WithResource("events"): typed(func(c kubeclient.Interface, ns string) kubeclient.EventInterface {
		return c.EventsV1().Events(ns)
	}),
	admissionregistrationv1.SchemeGroupVersion.WithResource("mutatingwebhookconfigurations"): typed(func(c kubeclient.Interface, _ string) kubeclient.MutatingWebhookConfigurationInterface {
		return c.AdmissionregistrationV1().MutatingWebhookConfigurations()
	}),
	admissionregistrationv1.SchemeGroupVersion.WithResource("validatingwebhookconfigurations"): typed(func(c kubeclient.Interface, _ string) kubeclient.ValidatingWebhookConfigurationInterface {
		return c.AdmissionregistrationV1().ValidatingWebhookConfigurations()
	}),
}

// typedListWatch lists and watches gvr through client's typed client for
// it, which must hold objects of type typ.
func typedListWatch(client kubeclient.Interface, gvr schema.GroupVersionResource, typ reflect.Type, namespace string) (string, *toolscache.ListWatch, error) {
	k, ok := typedKinds[gvr]
	if !ok {
		return "", nil, errors.New("the client has no typed client for it (a *kubeclient.Clientset lists any kind of kubeclient's scheme)")
	}
	if k.typ != typ {
		return "", nil, fmt.Errorf("its objects are %s, not %s", k.typ, typ)
	}
	return typ.Elem().Name(), k.listWatch(client, namespace), nil
}
