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
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	k8stesting "k8s.io/client-go/testing"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/hexagonal-operator/operator/internal/ports"
)

// Object is a typed Kubernetes object, such as *appsv1.ReplicaSet.
type Object interface {
	metav1.Object
	runtime.Object
}

// Resource is one kind held by the cache: a ports.Reader of its objects and
// the source of their changes, sharing one informer.
type Resource[T Object] struct {
	*source
	what string // the kind in lower case, for errors
}

var (
	_ ports.Reader[*appsv1.ReplicaSet]            = (*Resource[*appsv1.ReplicaSet])(nil)
	_ ports.Reader[*metav1.PartialObjectMetadata] = (*Resource[*metav1.PartialObjectMetadata])(nil)
)

// NewResource caches resource, a built-in resource of the [Typed] groups
// whose objects are T, through the group's REST client (protobuf); on
// client-go's fake clientset, through its object tracker.
func NewResource[T Object](c *Cache, resource schema.GroupVersionResource) (*Resource[T], error) {
	if err := check[T](c, resource); err != nil {
		return nil, err
	}
	kind, lw, err := typedListWatch[T](c.client, resource, c.namespace)
	if err != nil {
		return nil, fmt.Errorf("cache resource %s: %w", resourceKey(resource), err)
	}
	return newResource[T](c, resource, kind, "typed", lw, c.client, newObject[T](), nil)
}

// NewMetadataResource caches resource's metadata only, through the metadata
// client, which cannot tell kind; trims drop what no reader looks at.
func NewMetadataResource(c *Cache, resource schema.GroupVersionResource, kind string, trims ...Trim) (*Resource[*metav1.PartialObjectMetadata], error) {
	if err := check[*metav1.PartialObjectMetadata](c, resource); err != nil {
		return nil, err
	}
	if kind == "" {
		return nil, fmt.Errorf("cache resource %s: a kind is required", resourceKey(resource))
	}
	mode := "metadata"
	for _, t := range trims {
		mode += " " + t.name
	}
	// The metadata client clears the type, which an Event about the object needs.
	typeMeta := metav1.TypeMeta{APIVersion: resource.GroupVersion().String(), Kind: kind}
	decode := func(obj any) (any, error) {
		if m, ok := obj.(*metav1.PartialObjectMetadata); ok {
			m.TypeMeta = typeMeta
			for _, t := range trims {
				t.trim(&m.ObjectMeta)
			}
		}
		return obj, nil
	}
	lw := listWatch(c.meta.Resource(resource).Namespace(namespaceOf(resource, kind, c.namespace)))
	return newResource[*metav1.PartialObjectMetadata](c, resource, kind, mode, lw, c.meta, &metav1.PartialObjectMetadata{}, decode)
}

// Trim drops part of a metadata-only object's metadata before the cache
// holds it; one kind cannot be cached with two sets of trims.
type Trim struct {
	name string // for the refusal's message
	trim func(*metav1.ObjectMeta)
}

var (
	// WithoutLabels drops labels: for a kind whose readers follow owner
	// references rather than label selectors.
	WithoutLabels = Trim{"without labels", func(m *metav1.ObjectMeta) { m.Labels = nil }}
	// WithoutAnnotations drops annotations, which may hold whole objects
	// (kubectl's last-applied-configuration).
	WithoutAnnotations = Trim{"without annotations", func(m *metav1.ObjectMeta) { m.Annotations = nil }}
)

// NewDynamicResource caches resource through the dynamic client, decoding
// its objects into T, whose type name is the kind: for a CRD.
func NewDynamicResource[T Object](c *Cache, client dynamic.Interface, resource schema.GroupVersionResource) (*Resource[T], error) {
	if err := check[T](c, resource); err != nil {
		return nil, err
	}
	if client == nil {
		return nil, fmt.Errorf("cache resource %s: a dynamic client is required", resourceKey(resource))
	}
	kind := reflect.TypeFor[T]().Elem().Name()
	lw := listWatch(client.Resource(resource).Namespace(namespaceOf(resource, kind, c.namespace)))
	return newResource[T](c, resource, kind, "dynamic", lw, client, &unstructured.Unstructured{}, fromUnstructured[T])
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

// newResource keys the kind's informer by its kind name (the label of its
// metrics), refusing another way of caching it.
func newResource[T Object](c *Cache, resource schema.GroupVersionResource, kind, mode string,
	lw *toolscache.ListWatch, client any, example runtime.Object, decode func(any) (any, error),
) (*Resource[T], error) {
	if err := c.claim(kind, mode+":"+resource.String()); err != nil {
		return nil, err
	}
	build := func() toolscache.SharedIndexInformer { return newInformer(c.logger, kind, lw, client, example) }
	gk := schema.GroupKind{Group: resource.Group, Kind: kind}
	return &Resource[T]{source: &source{cache: c, key: kind, gk: gk, build: build, decode: decode}, what: strings.ToLower(kind)}, nil
}

// Get implements ports.Reader from the informer's store, once the kind has
// synced. The object is the cached one: DeepCopy before changing it.
func (r *Resource[T]) Get(ctx context.Context, key types.NamespacedName) (T, error) {
	var zero T
	inf, err := r.cache.syncedInformer(ctx, r.source)
	if err != nil {
		return zero, fmt.Errorf("read %s %s from cache: %w", r.what, key, err)
	}
	obj, ok, err := inf.GetIndexer().GetByKey(toolscache.ObjectName(key).String())
	if err != nil {
		return zero, fmt.Errorf("read %s %s from cache: %w", r.what, key, err)
	}
	if !ok {
		return zero, fmt.Errorf("%s %s: %w", r.what, key, ports.ErrNotFound)
	}
	t, ok := obj.(T)
	if !ok {
		return zero, fmt.Errorf("read %s %s from cache: the informer holds %T, not %T", r.what, key, obj, zero)
	}
	return t, nil
}

// List implements ports.Reader like Get, scanning the whole store (it has
// no namespace index).
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

// namespaceOf is the namespace to list and watch, none if cluster-scoped.
func namespaceOf(resource schema.GroupVersionResource, kind, namespace string) string {
	if clusterScoped[schema.GroupKind{Group: resource.Group, Kind: kind}] {
		return ""
	}
	return namespace
}

// resourceKey names a resource by its path, group first.
func resourceKey(gvr schema.GroupVersionResource) string {
	return gvr.GroupVersion().String() + "/" + gvr.Resource
}

func newObject[T Object]() T {
	return reflect.New(reflect.TypeFor[T]().Elem()).Interface().(T)
}

// groupClients are the groups [NewResource] reads, each through the REST
// client of its typed client.
var groupClients = map[schema.GroupVersion]func(kubernetes.Interface) rest.Interface{
	corev1.SchemeGroupVersion:                  func(c kubernetes.Interface) rest.Interface { return c.CoreV1().RESTClient() },
	appsv1.SchemeGroupVersion:                  func(c kubernetes.Interface) rest.Interface { return c.AppsV1().RESTClient() },
	coordinationv1.SchemeGroupVersion:          func(c kubernetes.Interface) rest.Interface { return c.CoordinationV1().RESTClient() },
	eventsv1.SchemeGroupVersion:                func(c kubernetes.Interface) rest.Interface { return c.EventsV1().RESTClient() },
	authenticationv1.SchemeGroupVersion:        func(c kubernetes.Interface) rest.Interface { return c.AuthenticationV1().RESTClient() },
	authorizationv1.SchemeGroupVersion:         func(c kubernetes.Interface) rest.Interface { return c.AuthorizationV1().RESTClient() },
	admissionregistrationv1.SchemeGroupVersion: func(c kubernetes.Interface) rest.Interface { return c.AdmissionregistrationV1().RESTClient() },
}

// Typed reports whether [NewResource] reads gv's kinds, rather than
// [NewDynamicResource].
func Typed(gv schema.GroupVersion) bool { return groupClients[gv] != nil }

// clusterScoped are the listable kinds of the groupClients outside
// namespaces; an integration test holds it against discovery.
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

// typedListWatch lists and watches gvr, whose objects must be T, a kind of
// client-go's scheme; the resource is checked against the kind's name, as
// the API server names built-in resources, rather than never syncing.
func typedListWatch[T Object](client kubernetes.Interface, gvr schema.GroupVersionResource, namespace string) (string, *toolscache.ListWatch, error) {
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
	if !scheme.Scheme.Recognizes(gv.WithKind(gvk.Kind + "List")) {
		return "", nil, fmt.Errorf("%s cannot be listed", gvk.Kind)
	}
	namespace = namespaceOf(gvr, gvk.Kind, namespace)
	if f, ok := client.(fakeClientset); ok {
		return gvk.Kind, &toolscache.ListWatch{
			ListWithContextFunc: func(_ context.Context, opts metav1.ListOptions) (runtime.Object, error) {
				return f.Invokes(k8stesting.NewListActionWithOptions(gvr, gvk, namespace, opts), nil)
			},
			WatchFuncWithContext: func(_ context.Context, opts metav1.ListOptions) (watch.Interface, error) {
				return f.InvokesWatch(k8stesting.NewWatchActionWithOptions(gvr, namespace, opts))
			},
		}, nil
	}
	return gvk.Kind, toolscache.NewListWatchFromClient(group(client), gvr.Resource, namespace, fields.Everything()), nil
}

// fakeClientset is client-go's fake clientset (kubernetes/fake), whose
// group clients have no REST client.
type fakeClientset interface {
	Invokes(action k8stesting.Action, defaultReturnObj runtime.Object) (runtime.Object, error)
	InvokesWatch(action k8stesting.Action) (watch.Interface, error)
}
