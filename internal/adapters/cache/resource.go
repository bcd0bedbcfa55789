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
	"k8s.io/apimachinery/pkg/labels"
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
// client-go's fake clientset, through its object tracker. opts narrow and
// trim what it holds.
func NewResource[T Object](c *Cache, resource schema.GroupVersionResource, opts ...Option) (*Resource[T], error) {
	if err := check[T](c, resource); err != nil {
		return nil, err
	}
	o, err := resourceOptionsOf[T](resource, opts)
	if err != nil {
		return nil, err
	}
	kind, lw, err := typedListWatch[T](c.client, resource, c.namespace)
	if err != nil {
		return nil, fmt.Errorf("cache resource %s: %w", resourceKey(resource), err)
	}
	return newResource[T](c, resource, kind, "typed", lw, c.client, newObject[T](), nil, o)
}

// NewMetadataResource caches resource's metadata only, through the metadata
// client, which cannot tell kind; opts narrow it and trim what it holds,
// such as [WithoutLabels].
func NewMetadataResource(c *Cache, resource schema.GroupVersionResource, kind string, opts ...Option) (*Resource[*metav1.PartialObjectMetadata], error) {
	if err := check[*metav1.PartialObjectMetadata](c, resource); err != nil {
		return nil, err
	}
	if kind == "" {
		return nil, fmt.Errorf("cache resource %s: a kind is required", resourceKey(resource))
	}
	o, err := resourceOptionsOf[*metav1.PartialObjectMetadata](resource, opts)
	if err != nil {
		return nil, err
	}
	// The metadata client clears the type, which an Event about the object needs.
	typeMeta := metav1.TypeMeta{APIVersion: resource.GroupVersion().String(), Kind: kind}
	decode := func(obj any) (any, error) {
		if m, ok := obj.(*metav1.PartialObjectMetadata); ok {
			m.TypeMeta = typeMeta
		}
		return obj, nil
	}
	lw := listWatch(c.meta.Resource(resource).Namespace(namespaceOf(resource, kind, c.namespace)))
	return newResource[*metav1.PartialObjectMetadata](c, resource, kind, "metadata", lw, c.meta, &metav1.PartialObjectMetadata{}, decode, o)
}

// Option shapes what a [Resource] holds of its kind: [Selector] which
// objects, a [Trim] what of each.
type Option interface {
	applyTo(o *resourceOptions)
}

type resourceOptions struct {
	selector string // labels.Selector.String(); empty for every object
	trims    []Trim
}

// Selector caches only the objects whose labels sel matches: the API
// server filters the informer's list and watch, so the others cost
// neither memory nor events, and an object that stops matching leaves the
// cache as a deletion. Resources of one kind with different selectors
// have informers of their own (the objects both select are held twice);
// with the same selector they share one. An empty selector selects
// everything, as no Selector does.
func Selector(sel labels.Selector) Option { return selector{sel} }

type selector struct{ sel labels.Selector }

func (s selector) applyTo(o *resourceOptions) {
	if s.sel != nil {
		o.selector = s.sel.String()
	}
}

// Trim drops part of each object before the cache holds it, for what no
// reader looks at; one kind (and selector) cannot be cached with two sets
// of trims. [WithoutLabels] and [WithoutAnnotations] fit every kind,
// [TrimOf] builds one for a type.
type Trim struct {
	name string       // for the refusal's message
	typ  reflect.Type // the type it trims; nil for any
	trim func(Object)
}

func (t Trim) applyTo(o *resourceOptions) { o.trims = append(o.trims, t) }

var (
	// WithoutLabels drops labels: for a kind whose readers follow owner
	// references rather than label selectors.
	WithoutLabels = Trim{name: "without labels", trim: func(o Object) { o.SetLabels(nil) }}
	// WithoutAnnotations drops annotations, which may hold whole objects
	// (kubectl's last-applied-configuration).
	WithoutAnnotations = Trim{name: "without annotations", trim: func(o Object) { o.SetAnnotations(nil) }}
)

// TrimOf is the Trim named name that changes each T in place before the
// cache holds it: it keeps what the kind's readers look at and drops the
// rest, such as a spec nobody reads. It runs in the informer's transform,
// on an object nobody else holds yet, and must give the same result when
// run twice. A Resource of another type refuses it.
func TrimOf[T Object](name string, trim func(T)) Trim {
	return Trim{name: name, typ: reflect.TypeFor[T](), trim: func(o Object) {
		if t, ok := o.(T); ok {
			trim(t)
		}
	}}
}

// resourceOptionsOf applies opts for a Resource of T, refusing a trim of
// another type.
func resourceOptionsOf[T Object](resource schema.GroupVersionResource, opts []Option) (resourceOptions, error) {
	var o resourceOptions
	for _, opt := range opts {
		if opt == nil {
			return o, fmt.Errorf("cache resource %s: a nil option", resourceKey(resource))
		}
		opt.applyTo(&o)
	}
	for _, t := range o.trims {
		if t.trim == nil {
			return o, fmt.Errorf("cache resource %s: trim %q does nothing", resourceKey(resource), t.name)
		}
		if t.typ != nil && t.typ != reflect.TypeFor[T]() {
			return o, fmt.Errorf("cache resource %s: trim %q is for %s, not %s", resourceKey(resource), t.name, t.typ, reflect.TypeFor[T]())
		}
	}
	return o, nil
}

// NewDynamicResource caches resource through the dynamic client, decoding
// its objects into T, whose type name is the kind: for a CRD. opts narrow
// and trim what it holds.
func NewDynamicResource[T Object](c *Cache, client dynamic.Interface, resource schema.GroupVersionResource, opts ...Option) (*Resource[T], error) {
	if err := check[T](c, resource); err != nil {
		return nil, err
	}
	if client == nil {
		return nil, fmt.Errorf("cache resource %s: a dynamic client is required", resourceKey(resource))
	}
	o, err := resourceOptionsOf[T](resource, opts)
	if err != nil {
		return nil, err
	}
	kind := reflect.TypeFor[T]().Elem().Name()
	lw := listWatch(client.Resource(resource).Namespace(namespaceOf(resource, kind, c.namespace)))
	return newResource[T](c, resource, kind, "dynamic", lw, client, &unstructured.Unstructured{}, fromUnstructured[T], o)
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
// metrics) and selector, refusing another way of caching them. decode,
// when set, turns what lw lists into T; o's trims follow it.
func newResource[T Object](c *Cache, resource schema.GroupVersionResource, kind, mode string,
	lw *toolscache.ListWatch, client any, example runtime.Object, decode func(any) (any, error), o resourceOptions,
) (*Resource[T], error) {
	key := informerKey{kind: kind, selector: o.selector}
	for _, t := range o.trims {
		mode += " " + t.name
	}
	if err := c.claim(key, mode+":"+resource.String()); err != nil {
		return nil, err
	}
	lw = selecting(lw, o.selector)
	build := func() toolscache.SharedIndexInformer { return newInformer(c.logger, key.String(), lw, client, example) }
	gk := schema.GroupKind{Group: resource.Group, Kind: kind}
	return &Resource[T]{source: &source{cache: c, key: key, gk: gk, build: build, decode: trimmed(decode, o.trims)}, what: strings.ToLower(kind)}, nil
}

// trimmed is decode followed by trims, nil when there is neither.
func trimmed(decode func(any) (any, error), trims []Trim) func(any) (any, error) {
	if len(trims) == 0 {
		return decode
	}
	return func(obj any) (any, error) {
		if decode != nil {
			var err error
			if obj, err = decode(obj); err != nil {
				return nil, err
			}
		}
		if o, ok := obj.(Object); ok {
			for _, t := range trims {
				t.trim(o)
			}
		}
		return obj, nil
	}
}

// selecting is lw asking the API server only for the objects selector
// matches; lw itself when it is empty.
func selecting(lw *toolscache.ListWatch, selector string) *toolscache.ListWatch {
	if selector == "" {
		return lw
	}
	list, watchFn := lw.ListWithContextFunc, lw.WatchFuncWithContext
	return &toolscache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			opts.LabelSelector = selector
			return list(ctx, opts)
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			opts.LabelSelector = selector
			return watchFn(ctx, opts)
		},
	}
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
				list, err := f.Invokes(k8stesting.NewListActionWithOptions(gvr, gvk, namespace, opts), nil)
				if err != nil || opts.LabelSelector == "" {
					return list, err
				}
				return selectItems(list, opts.LabelSelector)
			},
			WatchFuncWithContext: func(_ context.Context, opts metav1.ListOptions) (watch.Interface, error) {
				w, err := f.InvokesWatch(k8stesting.NewWatchActionWithOptions(gvr, namespace, opts))
				if err != nil || opts.LabelSelector == "" {
					return w, err
				}
				sel, err := labels.Parse(opts.LabelSelector)
				if err != nil {
					w.Stop()
					return nil, fmt.Errorf("parse label selector %q: %w", opts.LabelSelector, err)
				}
				return watch.Filter(w, func(e watch.Event) (watch.Event, bool) {
					o, err := meta.Accessor(e.Object)
					return e, err != nil || sel.Matches(labels.Set(o.GetLabels()))
				}), nil
			},
		}, nil
	}
	return gvk.Kind, toolscache.NewListWatchFromClient(group(client), gvr.Resource, namespace, fields.Everything()), nil
}

// selectItems keeps the items of list that selector matches, as the API
// server does for a list with a label selector and the fake clientset's
// tracker does not. (Its watch is filtered alike, without turning an
// object that stops matching into a deletion.)
func selectItems(list runtime.Object, selector string) (runtime.Object, error) {
	sel, err := labels.Parse(selector)
	if err != nil {
		return nil, fmt.Errorf("parse label selector %q: %w", selector, err)
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil, fmt.Errorf("select list items: %w", err)
	}
	kept := items[:0]
	for _, item := range items {
		if o, err := meta.Accessor(item); err == nil && sel.Matches(labels.Set(o.GetLabels())) {
			kept = append(kept, item)
		}
	}
	if err := meta.SetList(list, kept); err != nil {
		return nil, fmt.Errorf("select list items: %w", err)
	}
	return list, nil
}

// fakeClientset is client-go's fake clientset (kubernetes/fake), whose
// group clients have no REST client.
type fakeClientset interface {
	Invokes(action k8stesting.Action, defaultReturnObj runtime.Object) (runtime.Object, error)
	InvokesWatch(action k8stesting.Action) (watch.Interface, error)
}
