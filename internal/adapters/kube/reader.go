package kube

import (
	"context"
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/hexagonal-operator/operator/internal/ports"
)

// Reader implements ports.Reader[T] for one resource by asking the API
// server on every call, as controller-runtime's APIReader does: for the
// few reads that must not trust a cache, such as an admission rule that
// admits on what it reads (a cache may still hold an object deleted a
// moment ago). Objects come through the dynamic client, decoded into T,
// so built-in kinds and CRDs are read alike.
type Reader[T Object] struct {
	objects dynamic.NamespaceableResourceInterface
	what    string // the resource as kubectl names it, for errors
}

var _ ports.Reader[*metav1.PartialObjectMetadata] = (*Reader[*metav1.PartialObjectMetadata])(nil)

// NewReader returns the live reader of resource, whose objects are T. It
// does no I/O.
func NewReader[T Object](clients *Clients, resource schema.GroupVersionResource) (*Reader[T], error) {
	if clients == nil || clients.Dynamic == nil {
		return nil, errors.New("reader: the kube clients are required")
	}
	if _, err := apiType[T]("reader", resource); err != nil {
		return nil, err
	}
	return &Reader[T]{objects: clients.Dynamic.Resource(resource), what: resource.GroupResource().String()}, nil
}

// Get implements ports.Reader with a GET of the object, answered by the
// API server from its current state.
func (r *Reader[T]) Get(ctx context.Context, key types.NamespacedName) (T, error) {
	u, err := r.objects.Namespace(key.Namespace).Get(ctx, key.Name, metav1.GetOptions{})
	if err != nil {
		var zero T
		return zero, fmt.Errorf("get %s %s: %w", r.what, key, TranslateError(err))
	}
	out, err := decode[T](u)
	if err != nil {
		return out, fmt.Errorf("get %s %s: %w", r.what, key, err)
	}
	return out, nil
}

// List implements ports.Reader with a LIST of namespace (every namespace
// when empty), the selector sent to the API server.
func (r *Reader[T]) List(ctx context.Context, namespace string, opts ...ports.ListOption) ([]T, error) {
	o := ports.NewListOptions(opts...)
	list := metav1.ListOptions{}
	if o.Selector != nil {
		list.LabelSelector = o.Selector.String()
	}
	items, err := r.objects.Namespace(namespace).List(ctx, list)
	if err != nil {
		return nil, fmt.Errorf("list %s in namespace %q: %w", r.what, namespace, TranslateError(err))
	}
	out := make([]T, 0, len(items.Items))
	for i := range items.Items {
		obj, err := decode[T](&items.Items[i])
		if err != nil {
			return nil, fmt.Errorf("list %s in namespace %q: %w", r.what, namespace, err)
		}
		out = append(out, obj)
	}
	return out, nil
}

func decode[T Object](u *unstructured.Unstructured) (T, error) {
	out := newObject[T]()
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, out); err != nil {
		var zero T
		return zero, fmt.Errorf("decode %s %s/%s: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err)
	}
	return out, nil
}
