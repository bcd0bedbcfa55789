package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"

	"github.com/hexagonal-operator/operator/internal/ports"
)

// FieldManager is the name the operator's writes are recorded under in
// managedFields.
const FieldManager = "hexagonal-operator"

// Object is a typed Kubernetes object, such as *corev1.Pod.
type Object interface {
	metav1.Object
	runtime.Object
}

// Writer is the client of one kind: it implements ports.Writer[T] on the
// API server. Whole objects travel through the typed clientset (protobuf)
// when the kind's group is one of client-go's scheme, and through the dynamic
// client (JSON) otherwise, as for a CRD; PatchMetadata is a JSON merge patch
// through the metadata client for every kind, so labelling an object never
// decodes more than its metadata.
type Writer[T Object] struct {
	objects  objectClient[T]
	meta     metadata.Interface
	resource schema.GroupVersionResource
	kind     schema.GroupKind
	what     string // the resource as kubectl names it, for errors
}

var _ ports.Writer[*metav1.PartialObjectMetadata] = (*Writer[*metav1.PartialObjectMetadata])(nil)

// objectClient writes whole objects of one resource.
type objectClient[T Object] interface {
	create(ctx context.Context, obj T, opts metav1.CreateOptions) (T, error)
	update(ctx context.Context, obj T, subresource string, opts metav1.UpdateOptions) (T, error)
	delete(ctx context.Context, key types.NamespacedName, opts metav1.DeleteOptions) error
}

// NewWriter returns the writer of resource, whose objects are T. The kind
// is T's type name (the Go type of an API kind bears its name).
func NewWriter[T Object](clients *Clients, resource schema.GroupVersionResource) (*Writer[T], error) {
	if clients == nil || clients.Kubernetes == nil || clients.Metadata == nil || clients.Dynamic == nil {
		return nil, errors.New("writer: the kubernetes, metadata and dynamic clients are required")
	}
	if resource.Version == "" || resource.Resource == "" {
		return nil, fmt.Errorf("writer %q: version and resource are required", resource.String())
	}
	typ := reflect.TypeFor[T]()
	if typ.Kind() != reflect.Pointer || typ.Elem().Kind() != reflect.Struct {
		return nil, fmt.Errorf("writer %s: %s is not a pointer to an API type", resource, typ)
	}
	w := &Writer[T]{
		meta:     clients.Metadata,
		resource: resource,
		kind:     schema.GroupKind{Group: resource.Group, Kind: typ.Elem().Name()},
		what:     resource.GroupResource().String(),
	}
	rc, err := clients.restClientFor(resource.GroupVersion())
	if err != nil {
		return nil, fmt.Errorf("writer %s: %w", resource, err)
	}
	if rc != nil {
		w.objects = typedClient[T]{rest: rc, resource: resource.Resource}
	} else {
		w.objects = dynamicClient[T]{client: clients.Dynamic.Resource(resource), apiVersion: resource.GroupVersion().String(), kind: w.kind.Kind}
	}
	return w, nil
}

// GroupKind is the kind the writer reports its writes as.
func (w *Writer[T]) GroupKind() schema.GroupKind { return w.kind }

// Create implements ports.Writer.
func (w *Writer[T]) Create(ctx context.Context, obj T) (T, error) {
	out, err := w.objects.create(ctx, obj, metav1.CreateOptions{FieldManager: FieldManager})
	return w.done(ctx, "create", keyOf(obj), out, err)
}

// Update implements ports.Writer.
func (w *Writer[T]) Update(ctx context.Context, obj T) (T, error) {
	out, err := w.objects.update(ctx, obj, "", metav1.UpdateOptions{FieldManager: FieldManager})
	return w.done(ctx, "update", keyOf(obj), out, err)
}

// UpdateStatus implements ports.Writer.
func (w *Writer[T]) UpdateStatus(ctx context.Context, obj T) (T, error) {
	out, err := w.objects.update(ctx, obj, "status", metav1.UpdateOptions{FieldManager: FieldManager})
	return w.done(ctx, "update status of", keyOf(obj), out, err)
}

func (w *Writer[T]) done(ctx context.Context, verb string, key types.NamespacedName, out T, err error) (T, error) {
	if err != nil {
		var zero T
		return zero, fmt.Errorf("%s %s %s: %w", verb, w.what, key, TranslateError(err))
	}
	ports.ObserveWrite(ctx, w.kind, out.GetResourceVersion())
	return out, nil
}

// PatchMetadata implements ports.Writer as a JSON merge patch of the given
// labels and annotations: the API server merges it into the stored object,
// so keys that someone else wrote in the meantime survive, and a patch that
// changes nothing stores nothing.
func (w *Writer[T]) PatchMetadata(ctx context.Context, key types.NamespacedName, patch ports.MetadataPatch) error {
	if patch.Empty() {
		return nil
	}
	m := map[string]map[string]string{}
	if len(patch.Labels) > 0 {
		m["labels"] = patch.Labels
	}
	if len(patch.Annotations) > 0 {
		m["annotations"] = patch.Annotations
	}
	data, err := json.Marshal(map[string]any{"metadata": m})
	if err != nil {
		return fmt.Errorf("patch %s %s: encode: %w", w.what, key, err)
	}
	out, err := w.meta.Resource(w.resource).Namespace(key.Namespace).Patch(ctx, key.Name, types.MergePatchType, data,
		metav1.PatchOptions{FieldManager: FieldManager})
	if err != nil {
		return fmt.Errorf("patch %s %s: %w", w.what, key, TranslateError(err))
	}
	ports.ObserveWrite(ctx, w.kind, out.GetResourceVersion())
	return nil
}

// Delete implements ports.Writer; a uid is sent as a precondition.
func (w *Writer[T]) Delete(ctx context.Context, key types.NamespacedName, uid types.UID) error {
	opts := metav1.DeleteOptions{}
	if uid != "" {
		opts.Preconditions = &metav1.Preconditions{UID: &uid}
	}
	if err := w.objects.delete(ctx, key, opts); err != nil {
		return fmt.Errorf("delete %s %s: %w", w.what, key, TranslateError(err))
	}
	return nil
}

func keyOf(obj metav1.Object) types.NamespacedName {
	if reflect.ValueOf(obj).IsNil() {
		return types.NamespacedName{}
	}
	return types.NamespacedName{Namespace: obj.GetNamespace(), Name: obj.GetName()}
}

// typedClient writes through a REST client of client-go's scheme.
type typedClient[T Object] struct {
	rest     rest.Interface
	resource string
}

func (c typedClient[T]) request(r *rest.Request, namespace string) *rest.Request {
	return r.UseProtobufAsDefault().NamespaceIfScoped(namespace, namespace != "").Resource(c.resource)
}

func (c typedClient[T]) create(ctx context.Context, obj T, opts metav1.CreateOptions) (T, error) {
	out := newObject[T]()
	err := c.request(c.rest.Post(), obj.GetNamespace()).VersionedParams(&opts, scheme.ParameterCodec).
		Body(obj).Do(ctx).Into(out)
	return out, err
}

func (c typedClient[T]) update(ctx context.Context, obj T, subresource string, opts metav1.UpdateOptions) (T, error) {
	out := newObject[T]()
	r := c.request(c.rest.Put(), obj.GetNamespace()).Name(obj.GetName())
	if subresource != "" {
		r = r.SubResource(subresource)
	}
	err := r.VersionedParams(&opts, scheme.ParameterCodec).Body(obj).Do(ctx).Into(out)
	return out, err
}

func (c typedClient[T]) delete(ctx context.Context, key types.NamespacedName, opts metav1.DeleteOptions) error {
	return c.request(c.rest.Delete(), key.Namespace).Name(key.Name).Body(&opts).Do(ctx).Error()
}

// dynamicClient writes through the dynamic client, converting T to and from
// unstructured objects: the path of kinds client-go's scheme does not know.
type dynamicClient[T Object] struct {
	client     dynamic.NamespaceableResourceInterface
	apiVersion string
	kind       string
}

func (c dynamicClient[T]) toUnstructured(obj T) (*unstructured.Unstructured, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("convert %T to unstructured: %w", obj, err)
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetAPIVersion(c.apiVersion)
	u.SetKind(c.kind)
	return u, nil
}

func fromUnstructured[T Object](u *unstructured.Unstructured) (T, error) {
	out := newObject[T]()
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, out); err != nil {
		var zero T
		return zero, fmt.Errorf("convert unstructured to %T: %w", out, err)
	}
	return out, nil
}

func (c dynamicClient[T]) create(ctx context.Context, obj T, opts metav1.CreateOptions) (T, error) {
	var zero T
	u, err := c.toUnstructured(obj)
	if err != nil {
		return zero, err
	}
	out, err := c.client.Namespace(obj.GetNamespace()).Create(ctx, u, opts)
	if err != nil {
		return zero, err
	}
	return fromUnstructured[T](out)
}

func (c dynamicClient[T]) update(ctx context.Context, obj T, subresource string, opts metav1.UpdateOptions) (T, error) {
	var zero T
	u, err := c.toUnstructured(obj)
	if err != nil {
		return zero, err
	}
	var out *unstructured.Unstructured
	if subresource == "" {
		out, err = c.client.Namespace(obj.GetNamespace()).Update(ctx, u, opts)
	} else {
		out, err = c.client.Namespace(obj.GetNamespace()).Update(ctx, u, opts, subresource)
	}
	if err != nil {
		return zero, err
	}
	return fromUnstructured[T](out)
}

func (c dynamicClient[T]) delete(ctx context.Context, key types.NamespacedName, opts metav1.DeleteOptions) error {
	return c.client.Namespace(key.Namespace).Delete(ctx, key.Name, opts)
}

func newObject[T Object]() T {
	return reflect.New(reflect.TypeFor[T]().Elem()).Interface().(T)
}
