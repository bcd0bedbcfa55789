package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/gentype"
	"k8s.io/client-go/metadata"

	"github.com/hexagonal-operator/operator/internal/ports"
	"github.com/hexagonal-operator/operator/internal/writes"
)

// FieldManager is the name the operator's writes are recorded under in
// managedFields.
const FieldManager = "hexagonal-operator"

// Object is a typed Kubernetes object, such as *corev1.Pod.
type Object interface {
	metav1.Object
	runtime.Object
}

// apiType checks what the Reader and the Writer of resource (role) are
// built for: a resource with its version, and T a pointer to an API type,
// whose type it returns.
func apiType[T Object](role string, resource schema.GroupVersionResource) (reflect.Type, error) {
	if resource.Version == "" || resource.Resource == "" {
		return nil, fmt.Errorf("%s %q: version and resource are required", role, resource.String())
	}
	typ := reflect.TypeFor[T]()
	if typ.Kind() != reflect.Pointer || typ.Elem().Kind() != reflect.Struct {
		return nil, fmt.Errorf("%s %s: %s is not a pointer to an API type", role, resource, typ)
	}
	return typ, nil
}

// Writer implements ports.Writer[T] for one resource through client-go's
// generic typed client (protobuf for built-in kinds, JSON for a CRD's).
type Writer[T Object] struct {
	objects  func(namespace string) *gentype.Client[T]
	meta     metadata.Interface
	resource schema.GroupVersionResource
	kind     schema.GroupKind
	what     string // the resource as kubectl names it, for errors
}

var _ ports.Writer[*metav1.PartialObjectMetadata] = (*Writer[*metav1.PartialObjectMetadata])(nil)

// NewWriter returns the writer of resource, whose objects are T; T's type
// name is the kind.
func NewWriter[T Object](clients *Clients, resource schema.GroupVersionResource) (*Writer[T], error) {
	if clients == nil {
		return nil, errors.New("writer: the kube clients are required")
	}
	typ, err := apiType[T]("writer", resource)
	if err != nil {
		return nil, err
	}
	w := &Writer[T]{
		meta:     clients.Metadata,
		resource: resource,
		kind:     schema.GroupKind{Group: resource.Group, Kind: typ.Elem().Name()},
		what:     resource.GroupResource().String(),
	}
	rc, err := clients.restClientFor(resource.GroupVersion(), w.kind.Kind, newObject[T]())
	if err != nil {
		return nil, fmt.Errorf("writer %s: %w", resource, err)
	}
	w.objects = func(ns string) *gentype.Client[T] {
		return gentype.NewClient(resource.Resource, rc, metav1.ParameterCodec, ns, newObject[T], gentype.PrefersProtobuf[T]())
	}
	return w, nil
}

// Create implements ports.Writer.
func (w *Writer[T]) Create(ctx context.Context, obj T) (T, error) {
	out, err := w.objects(obj.GetNamespace()).Create(ctx, obj, metav1.CreateOptions{FieldManager: FieldManager})
	return w.done(ctx, "create", obj, out, err)
}

// Update implements ports.Writer.
func (w *Writer[T]) Update(ctx context.Context, obj T) (T, error) {
	out, err := w.objects(obj.GetNamespace()).Update(ctx, obj, metav1.UpdateOptions{FieldManager: FieldManager})
	return w.done(ctx, "update", obj, out, err)
}

// UpdateStatus implements ports.Writer.
func (w *Writer[T]) UpdateStatus(ctx context.Context, obj T) (T, error) {
	out, err := w.objects(obj.GetNamespace()).UpdateStatus(ctx, obj, metav1.UpdateOptions{FieldManager: FieldManager})
	return w.done(ctx, "update status of", obj, out, err)
}

func (w *Writer[T]) done(ctx context.Context, verb string, obj, out T, err error) (T, error) {
	if err != nil {
		var zero T
		key := types.NamespacedName{Namespace: obj.GetNamespace(), Name: obj.GetName()}
		return zero, fmt.Errorf("%s %s %s: %w", verb, w.what, key, TranslateError(err))
	}
	writes.Observe(ctx, w.kind, out.GetResourceVersion())
	return out, nil
}

// PatchMetadata implements ports.Writer as a JSON merge patch through the
// metadata client: keys others wrote survive, and a no-op stores nothing.
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
	writes.Observe(ctx, w.kind, out.GetResourceVersion())
	return nil
}

// Delete implements ports.Writer; a uid is sent as a precondition.
func (w *Writer[T]) Delete(ctx context.Context, key types.NamespacedName, uid types.UID) error {
	opts := metav1.DeleteOptions{}
	if uid != "" {
		opts.Preconditions = &metav1.Preconditions{UID: &uid}
	}
	if err := w.objects(key.Namespace).Delete(ctx, key.Name, opts); err != nil {
		return fmt.Errorf("delete %s %s: %w", w.what, key, TranslateError(err))
	}
	return nil
}

func newObject[T Object]() T {
	return reflect.New(reflect.TypeFor[T]().Elem()).Interface().(T)
}
