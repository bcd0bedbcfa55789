package ports

import (
	"context"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
)

// Reader knows how to read objects of a kind, one by namespace and name or
// a namespace's at once, typically from a cache. T is the kind's typed object, for example
// Reader[*appsv1.ReplicaSet], or *metav1.PartialObjectMetadata for a kind
// the operator reads the metadata of only: one port, and one adapter behind
// it, serve every kind, and the domain still reads typed fields instead of
// asserting types.
//
// The returned object may be shared with the cache: callers must not mutate
// it (DeepCopy first). A missing object is reported as [ErrNotFound]. For a
// cluster-scoped kind key.Namespace is empty. List returns the objects of
// namespace (every namespace when it is empty) that match opts, in no
// particular order; none is an empty list, not an error.
type Reader[T any] interface {
	Get(ctx context.Context, key types.NamespacedName) (T, error)
	List(ctx context.Context, namespace string, opts ...ListOption) ([]T, error)
}

// ListOption narrows what [Reader.List] returns.
type ListOption func(*ListOptions)

// ListOptions are the options of one List, as [NewListOptions] applies
// them.
type ListOptions struct {
	// Selector matches the objects' labels; nil matches everything.
	Selector labels.Selector
}

// NewListOptions applies opts to empty ListOptions, for the adapters.
func NewListOptions(opts ...ListOption) ListOptions {
	var o ListOptions
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

// Matches reports whether an object with these labels passes the options.
func (o ListOptions) Matches(objLabels map[string]string) bool {
	return o.Selector == nil || o.Selector.Matches(labels.Set(objLabels))
}

// MatchingLabels lists the objects that carry every one of these labels.
func MatchingLabels(set map[string]string) ListOption {
	return MatchingSelector(labels.SelectorFromSet(set))
}

// MatchingSelector lists the objects whose labels sel matches.
func MatchingSelector(sel labels.Selector) ListOption {
	return func(o *ListOptions) { o.Selector = sel }
}

// Writer knows how to change objects of one kind in the cluster. T is the
// kind's typed object, as for [Reader].
//
// Create, Update and UpdateStatus return the object as the API server
// stored it. Update and UpdateStatus fail with [ErrConflict] when obj's
// resourceVersion is not the stored one. PatchMetadata merges labels and
// annotations into the stored object's without reading it first (no
// conflict is possible); it is the cheap write for the common "mark this
// object" case. Delete with a non-empty uid deletes only that incarnation
// of the object ([ErrConflict] when the name now belongs to another).
//
// Every successful create, update and patch reports the object's kind and
// new resourceVersion to the write observer the context carries, if any,
// so that the controller loop's next reconcile reads its own writes.
// Errors are this package's sentinels: [ErrNotFound], [ErrConflict],
// [ErrAlreadyExists], [ErrInvalid], [ErrForbidden].
type Writer[T any] interface {
	Create(ctx context.Context, obj T) (T, error)
	Update(ctx context.Context, obj T) (T, error)
	UpdateStatus(ctx context.Context, obj T) (T, error)
	PatchMetadata(ctx context.Context, key types.NamespacedName, patch MetadataPatch) error
	Delete(ctx context.Context, key types.NamespacedName, uid types.UID) error
}

// MetadataPatch is what [Writer.PatchMetadata] merges into an object: each
// label and annotation given replaces the one of the same key or is added;
// the others stay. An empty patch writes nothing.
type MetadataPatch struct {
	Labels      map[string]string
	Annotations map[string]string
}

// Empty reports whether the patch changes nothing.
func (p MetadataPatch) Empty() bool { return len(p.Labels) == 0 && len(p.Annotations) == 0 }
