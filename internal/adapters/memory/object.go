package memory

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/hexagonal-operator/operator/internal/ports"
)

// Object is a typed Kubernetes object, such as *corev1.ConfigMap: what an
// [ObjectStore] holds.
type Object interface {
	metav1.Object
	runtime.Object
}

// ObjectStore is the twin of the generic cache resource and metadata
// patcher together: objects of one kind behind ports.ObjectReader[T] and
// ports.AnnotationWriter, whose changes go to [ObjectStore.Source]. Like
// ReplicaSetStore it never lags: a write is visible to the next read.
type ObjectStore[T Object] struct {
	source *Source
	kind   string

	mu       sync.Mutex // guards what follows
	items    map[types.NamespacedName]T
	version  uint64 // last resourceVersion handed out, store-wide like etcd's
	patchErr error
}

var (
	_ ports.ObjectReader[*corev1.ConfigMap] = (*ObjectStore[*corev1.ConfigMap])(nil)
	_ ports.AnnotationWriter                = (*ObjectStore[*corev1.ConfigMap])(nil)
)

// NewObjectStore returns an empty store of T, a pointer to a built-in API
// type (NewObjectStore[*corev1.ConfigMap]()). Its source's kind is the type's
// name, as the cache names built-in kinds.
func NewObjectStore[T Object]() *ObjectStore[T] {
	t := reflect.TypeFor[T]()
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return &ObjectStore[T]{source: NewSource(t.Name()), kind: strings.ToLower(t.Name()), items: map[types.NamespacedName]T{}}
}

// Source delivers the store's changes, as the kind's informer would.
func (s *ObjectStore[T]) Source() *Source { return s.source }

// GetObject implements ports.ObjectReader[T]. It returns a copy.
func (s *ObjectStore[T]) GetObject(ctx context.Context, key types.NamespacedName) (T, error) {
	if err := ctx.Err(); err != nil {
		var zero T
		return zero, err
	}
	return s.Get(key)
}

// SetAnnotations implements ports.AnnotationWriter as a merge of
// annotations into the stored object: other annotations and fields stay,
// and nothing is written (no new resourceVersion, no event) when every
// annotation already has its value.
func (s *ObjectStore[T]) SetAnnotations(ctx context.Context, key types.NamespacedName, annotations map[string]string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	if s.patchErr != nil {
		err := s.patchErr
		s.mu.Unlock()
		return fmt.Errorf("patch %s %s: %w", s.kind, key, err)
	}
	cur, ok := s.items[key]
	if !ok {
		s.mu.Unlock()
		return fmt.Errorf("patch %s %s: %w", s.kind, key, ports.ErrNotFound)
	}
	merged := maps.Clone(cur.GetAnnotations())
	if merged == nil {
		merged = map[string]string{}
	}
	maps.Copy(merged, annotations)
	if len(annotations) == 0 || maps.Equal(merged, cur.GetAnnotations()) {
		s.mu.Unlock()
		return nil
	}
	next := copyOf(cur)
	next.SetAnnotations(merged)
	s.commitLocked(cur, next)
	return nil
}

// FailSetAnnotations makes every SetAnnotations fail with err (wrapped)
// until it is called again with nil; for testing how callers handle write
// errors such as ports.ErrInvalid or ports.ErrForbidden.
func (s *ObjectStore[T]) FailSetAnnotations(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.patchErr = err
}

// Create stores a copy of obj and returns the stored state, with a new
// resourceVersion, a UID and a creation time. An object of that name is
// ports.ErrAlreadyExists; one without a name ports.ErrInvalid.
func (s *ObjectStore[T]) Create(obj T) (T, error) {
	var zero T
	if isNil(obj) || obj.GetName() == "" {
		return zero, fmt.Errorf("create %s: name is required: %w", s.kind, ports.ErrInvalid)
	}
	key := keyOf(obj)
	s.mu.Lock()
	if _, ok := s.items[key]; ok {
		s.mu.Unlock()
		return zero, fmt.Errorf("create %s %s: %w", s.kind, key, ports.ErrAlreadyExists)
	}
	next := copyOf(obj)
	next.SetUID(types.UID(fmt.Sprintf("memory-%s-uid-%d", s.kind, s.version+1)))
	next.SetCreationTimestamp(metav1.NewTime(time.Now().Truncate(time.Second)))
	s.commitLocked(zero, next)
	return copyOf(next), nil
}

// Update replaces the stored object with a copy of obj, as a PUT does: a
// non-empty resourceVersion must be the stored one (ports.ErrConflict
// otherwise), an empty one overwrites unconditionally. An update that
// changes nothing writes nothing. A missing object is ports.ErrNotFound.
func (s *ObjectStore[T]) Update(obj T) (T, error) {
	var zero T
	if isNil(obj) {
		return zero, fmt.Errorf("update %s: %w", s.kind, ports.ErrInvalid)
	}
	key := keyOf(obj)
	s.mu.Lock()
	cur, ok := s.items[key]
	switch {
	case !ok:
		s.mu.Unlock()
		return zero, fmt.Errorf("update %s %s: %w", s.kind, key, ports.ErrNotFound)
	case obj.GetResourceVersion() != "" && obj.GetResourceVersion() != cur.GetResourceVersion():
		s.mu.Unlock()
		return zero, fmt.Errorf("update %s %s: resourceVersion %s is not the stored %s: %w",
			s.kind, key, obj.GetResourceVersion(), cur.GetResourceVersion(), ports.ErrConflict)
	}
	next := copyOf(obj)
	// Fields the server owns.
	next.SetUID(cur.GetUID())
	next.SetCreationTimestamp(cur.GetCreationTimestamp())
	next.SetGeneration(cur.GetGeneration())
	next.SetResourceVersion(cur.GetResourceVersion())
	if equality.Semantic.DeepEqual(next, cur) {
		s.mu.Unlock()
		return copyOf(cur), nil
	}
	s.commitLocked(cur, next)
	return copyOf(next), nil
}

// Delete removes the object key; a missing one is ports.ErrNotFound.
func (s *ObjectStore[T]) Delete(key types.NamespacedName) error {
	s.mu.Lock()
	cur, ok := s.items[key]
	if !ok {
		s.mu.Unlock()
		return fmt.Errorf("delete %s %s: %w", s.kind, key, ports.ErrNotFound)
	}
	var none T
	s.commitLocked(cur, none)
	return nil
}

// Get returns a copy of the stored object key, or ports.ErrNotFound.
func (s *ObjectStore[T]) Get(key types.NamespacedName) (T, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	obj, ok := s.items[key]
	if !ok {
		var zero T
		return zero, fmt.Errorf("%s %s: %w", s.kind, key, ports.ErrNotFound)
	}
	return copyOf(obj), nil
}

// List returns copies of every stored object, sorted by namespace and name.
func (s *ObjectStore[T]) List() []T {
	s.mu.Lock()
	out := make([]T, 0, len(s.items))
	for _, obj := range s.items {
		out = append(out, copyOf(obj))
	}
	s.mu.Unlock()
	slices.SortFunc(out, func(a, b T) int { return strings.Compare(keyOf(a).String(), keyOf(b).String()) })
	return out
}

// commitLocked stores next in place of cur (either may be nil: a creation,
// a deletion), then tells the source, in write order; it is called with
// s.mu held and releases it, as ReplicaSetStore.commitLocked does.
func (s *ObjectStore[T]) commitLocked(cur, next T) {
	var old T
	if !isNil(cur) {
		old = copyOf(cur)
	}
	if !isNil(next) {
		s.version++
		next.SetResourceVersion(strconv.FormatUint(s.version, 10))
		s.items[keyOf(next)] = next
		next = copyOf(next)
	} else {
		delete(s.items, keyOf(cur))
	}
	s.source.deliver.Lock()
	s.mu.Unlock()
	defer s.source.deliver.Unlock()
	switch {
	case isNil(old):
		s.source.add(next)
	case isNil(next):
		s.source.delete(old)
	default:
		s.source.update(old, next)
	}
}

func copyOf[T Object](obj T) T {
	return obj.DeepCopyObject().(T)
}

// isNil reports whether obj is a nil pointer (or no object at all), which
// a comparison with the zero T cannot tell for every T.
func isNil[T Object](obj T) bool {
	v := reflect.ValueOf(obj)
	return !v.IsValid() || (v.Kind() == reflect.Pointer && v.IsNil())
}
