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
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/gentype"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/hexagonal-operator/operator/internal/ports"
)

// Object is a typed Kubernetes object, such as *appsv1.ReplicaSet.
type Object interface {
	metav1.Object
	runtime.Object
}

// Resource is one kind held by the cache: a ports.Reader of its objects and
// a ports.Source of their changes, sharing one informer. Build it with
// [NewResource] (typed objects), [NewMetadataResource] (metadata only) or
// [NewDynamicResource] (a kind outside the [Typed] groups, such as a CRD).
type Resource[T Object] struct {
	*source
	what string // the kind in lower case, for errors: computed once, off the read path
}

var (
	_ ports.Source                                = (*Resource[*appsv1.ReplicaSet])(nil)
	_ ports.Reader[*appsv1.ReplicaSet]            = (*Resource[*appsv1.ReplicaSet])(nil)
	_ ports.Reader[*metav1.PartialObjectMetadata] = (*Resource[*metav1.PartialObjectMetadata])(nil)
)

// NewResource caches resource, a built-in resource whose objects are T.
// On a *kubernetes.Clientset it serves any kind an informer can list and
// watch in the groups [Typed] names, through the group's REST client
// (protobuf), decoding into T; on another kubernetes.Interface (a test's
// fake) only the kinds of typedKinds.
func NewResource[T Object](c *Cache, resource schema.GroupVersionResource) (*Resource[T], error) {
	if err := check[T](c, resource); err != nil {
		return nil, err
	}
	typ := reflect.TypeFor[T]()
	var (
		kind string
		lw   *toolscache.ListWatch
		err  error
	)
	if cs, ok := c.client.(*kubernetes.Clientset); ok {
		kind, lw, err = restListWatch[T](cs, resource, c.namespace)
	} else {
		kind, lw, err = typedListWatch(c.client, resource, typ, c.namespace)
	}
	if err != nil {
		return nil, fmt.Errorf("cache resource %s: %w", resourceKey(resource), err)
	}
	gk := schema.GroupKind{Group: resource.Group, Kind: kind}
	return newResource[T](c, gk, resource, "typed", func() toolscache.SharedIndexInformer {
		return newInformer(c.logger, kind, lw, c.client, newObject[T](), nil)
	})
}

// NewMetadataResource caches resource as metadata only: the metadata
// client asks the server for PartialObjectMetadata, so objects whose spec
// and status the operator never reads (Pods, for the operator's own
// controllers) cost only their metadata in memory. kind is the resource's
// kind (the metadata client cannot tell it). trims drop from every cached
// object the metadata its readers never look at.
func NewMetadataResource(c *Cache, resource schema.GroupVersionResource, kind string, trims ...Trim) (*Resource[*metav1.PartialObjectMetadata], error) {
	if err := check[*metav1.PartialObjectMetadata](c, resource); err != nil {
		return nil, err
	}
	if kind == "" {
		return nil, fmt.Errorf("cache resource %s: a kind is required", resourceKey(resource))
	}
	lw := listWatch(c.meta.Resource(resource).Namespace(namespaceOf(resource, kind, c.namespace)))
	gk := schema.GroupKind{Group: resource.Group, Kind: kind}
	mode := "metadata"
	for _, t := range trims {
		mode += " " + t.name
	}
	r, err := newResource[*metav1.PartialObjectMetadata](c, gk, resource, mode, func() toolscache.SharedIndexInformer {
		return newInformer(c.logger, kind, lw, c.meta, &metav1.PartialObjectMetadata{}, nil)
	})
	if err != nil {
		return nil, err
	}
	// The metadata client clears what it lists of its type; a cached object
	// says which kind it is, so that an Event about it, or any reader,
	// can tell. Both strings are shared by every object of the kind.
	typeMeta := metav1.TypeMeta{APIVersion: resource.GroupVersion().String(), Kind: kind}
	r.decode = func(obj any) (any, error) {
		if m, ok := obj.(*metav1.PartialObjectMetadata); ok {
			m.TypeMeta = typeMeta
			for _, t := range trims {
				t.trim(&m.ObjectMeta)
			}
		}
		return obj, nil
	}
	return r, nil
}

// Trim drops part of a metadata-only object's metadata before the cache
// holds it: what no reader of the kind looks at need not take memory.
// Declare it where the kind is registered, beside the readers it serves;
// the same kind cached with other trims is refused, since both would share
// one informer.
type Trim struct {
	name string // for the refusal's message
	trim func(*metav1.ObjectMeta)
}

// The trims a kind may be cached with.
var (
	// WithoutLabels drops labels: for a kind whose readers follow owner
	// references rather than label selectors.
	WithoutLabels = Trim{"without labels", func(m *metav1.ObjectMeta) { m.Labels = nil }}
	// WithoutAnnotations drops annotations, which may hold whole objects
	// (kubectl's last-applied-configuration).
	WithoutAnnotations = Trim{"without annotations", func(m *metav1.ObjectMeta) { m.Annotations = nil }}
)

// NewDynamicResource caches resource through the dynamic client, decoding
// its objects into T as they arrive, so readers get typed objects: the path
// of a CRD's kind. T's type name is the kind (the Go type of an API kind
// bears its name).
func NewDynamicResource[T Object](c *Cache, client dynamic.Interface, resource schema.GroupVersionResource) (*Resource[T], error) {
	if err := check[T](c, resource); err != nil {
		return nil, err
	}
	if client == nil {
		return nil, fmt.Errorf("cache resource %s: a dynamic client is required", resourceKey(resource))
	}
	kind := reflect.TypeFor[T]().Elem().Name()
	lw := listWatch(client.Resource(resource).Namespace(namespaceOf(resource, kind, c.namespace)))
	gk := schema.GroupKind{Group: resource.Group, Kind: kind}
	r, err := newResource[T](c, gk, resource, "dynamic", func() toolscache.SharedIndexInformer {
		return newInformer(c.logger, kind, lw, client, &unstructured.Unstructured{}, nil)
	})
	if err != nil {
		return nil, err
	}
	r.decode = fromUnstructured[T]
	return r, nil
}

func check[T Object](c *Cache, resource schema.GroupVersionResource) error {
	if c == nil {
		return errors.New("cache resource: a cache is required")
	}
	if resource.Version == "" || resource.Resource == "" {
		return fmt.Errorf("cache resource %q: version and resource are required", resource.String())
	}
	typ := reflect.TypeFor[T]()
	if typ.Kind() != reflect.Pointer || typ.Elem().Kind() != reflect.Struct {
		return fmt.Errorf("cache resource %s: %s is not a pointer to an API type", resourceKey(resource), typ)
	}
	return nil
}

// newResource registers the kind's informer under its kind name (the label
// of its metrics and readiness messages); asking twice for the same kind
// the same way shares one informer.
func newResource[T Object](c *Cache, gk schema.GroupKind, resource schema.GroupVersionResource, mode string,
	build func() toolscache.SharedIndexInformer,
) (*Resource[T], error) {
	id := mode + ":" + resource.String()
	if err := c.claim(gk.Kind, id); err != nil {
		return nil, err
	}
	return &Resource[T]{source: &source{cache: c, key: gk.Kind, gk: gk, build: build}, what: strings.ToLower(gk.Kind)}, nil
}

// Get implements ports.Reader from the informer's store, once the kind has
// synced. The object is the cached one: DeepCopy before changing it.
func (r *Resource[T]) Get(ctx context.Context, key types.NamespacedName) (T, error) {
	var zero T
	what := r.what
	inf, err := r.cache.syncedInformer(ctx, r.source)
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

// List implements ports.Reader from the informer's store, once the kind has
// synced. The objects are the cached ones: DeepCopy before changing them. A
// namespace's list scans the whole store, which has no namespace index (see
// newInformer).
func (r *Resource[T]) List(ctx context.Context, namespace string, opts ...ports.ListOption) ([]T, error) {
	inf, err := r.cache.syncedInformer(ctx, r.source)
	if err != nil {
		return nil, fmt.Errorf("list %s in %q from cache: %w", r.what, namespace, err)
	}
	o := ports.NewListOptions(opts...)
	out := []T{}
	for _, obj := range inf.GetStore().List() {
		t, ok := obj.(T)
		if ok && (namespace == "" || t.GetNamespace() == namespace) && o.Matches(t.GetLabels()) {
			out = append(out, t)
		}
	}
	return out, nil
}

// fromUnstructured decodes an object of the dynamic client into T.
func fromUnstructured[T Object](obj any) (any, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil
	}
	out := newObject[T]()
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, out); err != nil {
		return nil, fmt.Errorf("convert %s %s/%s: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err)
	}
	return out, nil
}

// namespaceOf is the namespace to list and watch: none for a cluster-scoped
// kind.
func namespaceOf(resource schema.GroupVersionResource, kind, namespace string) string {
	if clusterScoped[schema.GroupKind{Group: resource.Group, Kind: kind}] {
		return ""
	}
	return namespace
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

// groupClients are the groups whose kinds [NewResource] reads from a
// *kubernetes.Clientset, each through the REST client of its typed client.
var groupClients = map[schema.GroupVersion]func(*kubernetes.Clientset) rest.Interface{
	corev1.SchemeGroupVersion:                  func(c *kubernetes.Clientset) rest.Interface { return c.CoreV1().RESTClient() },
	appsv1.SchemeGroupVersion:                  func(c *kubernetes.Clientset) rest.Interface { return c.AppsV1().RESTClient() },
	coordinationv1.SchemeGroupVersion:          func(c *kubernetes.Clientset) rest.Interface { return c.CoordinationV1().RESTClient() },
	eventsv1.SchemeGroupVersion:                func(c *kubernetes.Clientset) rest.Interface { return c.EventsV1().RESTClient() },
	authenticationv1.SchemeGroupVersion:        func(c *kubernetes.Clientset) rest.Interface { return c.AuthenticationV1().RESTClient() },
	authorizationv1.SchemeGroupVersion:         func(c *kubernetes.Clientset) rest.Interface { return c.AuthorizationV1().RESTClient() },
	admissionregistrationv1.SchemeGroupVersion: func(c *kubernetes.Clientset) rest.Interface { return c.AdmissionregistrationV1().RESTClient() },
}

// Typed reports whether [NewResource] reads gv's kinds from a real
// clientset; other kinds are read with [NewDynamicResource].
func Typed(gv schema.GroupVersion) bool { return groupClients[gv] != nil }

// clusterScoped are the kinds of the groupClients that an informer can
// list and watch and that live outside namespaces
// (+genclient:nonNamespaced in k8s.io/api): they are listed without the
// cache's namespace. Without discovery nothing else says so, so extend it
// with groupClients; an integration test holds it against the
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
// T must be the kind of gvr in client-go's scheme, which names the list
// type to decode into ("<Kind>List"). Which resource serves a kind is
// guessed from its name, as the API server names its built-in resources;
// a resource that is not T's kind is refused rather than an informer that
// never syncs.
func restListWatch[T Object](clientset *kubernetes.Clientset, gvr schema.GroupVersionResource, namespace string) (string, *toolscache.ListWatch, error) {
	gv := gvr.GroupVersion()
	group := groupClients[gv]
	if group == nil {
		return "", nil, fmt.Errorf("%s is not a group the cache reads typed", gv)
	}
	example := newObject[T]()
	gvks, _, err := scheme.Scheme.ObjectKinds(example)
	if err != nil {
		return "", nil, fmt.Errorf("%T is not a type of client-go's scheme: %w", example, err)
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
	list, err := scheme.Scheme.New(listKind)
	if err != nil {
		return "", nil, fmt.Errorf("%s cannot be listed: %w", gvk.Kind, err)
	}
	listType := reflect.TypeOf(list).Elem()
	newList := func() runtime.Object { return reflect.New(listType).Interface().(runtime.Object) }
	namespace = namespaceOf(gvr, gvk.Kind, namespace)
	client := gentype.NewClientWithList[T, runtime.Object](gvr.Resource, group(clientset), scheme.ParameterCodec, namespace, newObject[T], newList)
	return gvk.Kind, listWatch[runtime.Object](client), nil
}

// typedKind is a kind the cache lists through the clientset's typed client
// on clientsets other than *kubernetes.Clientset (fakes, in tests).
type typedKind struct {
	typ reflect.Type
	// listWatch lists and watches in namespace, or in all namespaces when
	// it is empty; cluster-scoped kinds ignore it.
	listWatch func(client kubernetes.Interface, namespace string) *toolscache.ListWatch
}

func typed[T Object, L runtime.Object](client func(kubernetes.Interface, string) listWatcher[L]) typedKind {
	return typedKind{
		typ:       reflect.TypeFor[T](),
		listWatch: func(c kubernetes.Interface, ns string) *toolscache.ListWatch { return listWatch(client(c, ns)) },
	}
}

// typedKinds serve clientsets without REST clients (fakes, in tests).
// ReplicaSets are the cache's own.
var typedKinds = map[schema.GroupVersionResource]typedKind{
	appsv1.SchemeGroupVersion.WithResource("replicasets"): typed[*appsv1.ReplicaSet](func(c kubernetes.Interface, ns string) listWatcher[*appsv1.ReplicaSetList] {
		return c.AppsV1().ReplicaSets(ns)
	}),
	corev1.SchemeGroupVersion.WithResource("pods"): typed[*corev1.Pod](func(c kubernetes.Interface, ns string) listWatcher[*corev1.PodList] {
		return c.CoreV1().Pods(ns)
	}),
	corev1.SchemeGroupVersion.WithResource("secrets"): typed[*corev1.Secret](func(c kubernetes.Interface, ns string) listWatcher[*corev1.SecretList] {
		return c.CoreV1().Secrets(ns)
	}),
	corev1.SchemeGroupVersion.WithResource("configmaps"): typed[*corev1.ConfigMap](func(c kubernetes.Interface, ns string) listWatcher[*corev1.ConfigMapList] {
		return c.CoreV1().ConfigMaps(ns)
	}),
	coordinationv1.SchemeGroupVersion.WithResource("leases"): typed[*coordinationv1.Lease](func(c kubernetes.Interface, ns string) listWatcher[*coordinationv1.LeaseList] {
		return c.CoordinationV1().Leases(ns)
	}),
	eventsv1.SchemeGroupVersion.WithResource("events"): typed[*eventsv1.Event](func(c kubernetes.Interface, ns string) listWatcher[*eventsv1.EventList] {
		return c.EventsV1().Events(ns)
	}),
	admissionregistrationv1.SchemeGroupVersion.WithResource("mutatingwebhookconfigurations"): typed[*admissionregistrationv1.MutatingWebhookConfiguration](func(c kubernetes.Interface, _ string) listWatcher[*admissionregistrationv1.MutatingWebhookConfigurationList] {
		return c.AdmissionregistrationV1().MutatingWebhookConfigurations()
	}),
	admissionregistrationv1.SchemeGroupVersion.WithResource("validatingwebhookconfigurations"): typed[*admissionregistrationv1.ValidatingWebhookConfiguration](func(c kubernetes.Interface, _ string) listWatcher[*admissionregistrationv1.ValidatingWebhookConfigurationList] {
		return c.AdmissionregistrationV1().ValidatingWebhookConfigurations()
	}),
}

// typedListWatch lists and watches gvr through client's typed client for
// it, which must hold objects of type typ.
func typedListWatch(client kubernetes.Interface, gvr schema.GroupVersionResource, typ reflect.Type, namespace string) (string, *toolscache.ListWatch, error) {
	k, ok := typedKinds[gvr]
	if !ok {
		return "", nil, errors.New("the client has no typed client for it (a *kubernetes.Clientset lists any kind of the typed groups)")
	}
	if k.typ != typ {
		return "", nil, fmt.Errorf("its objects are %s, not %s", k.typ, typ)
	}
	return typ.Elem().Name(), k.listWatch(client, namespace), nil
}
