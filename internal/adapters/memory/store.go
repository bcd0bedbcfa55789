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

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/hexagonal-operator/operator/internal/ports"
	"github.com/hexagonal-operator/operator/internal/writes"
)

// Object is a typed Kubernetes object, such as *appsv1.ReplicaSet: what a
// [Store] holds.
type Object interface {
	metav1.Object
	runtime.Object
}

// Store is the twin of the cache (a ports.Reader[T]) and the client (a
// ports.Writer[T]) for one kind at once, the way a cluster is both: what a
// reconcile writes, the next one reads.
//
// It behaves like the API server where the domain can tell: resourceVersion
// bumps on every change and is checked on Update and UpdateStatus; Update
// keeps the stored status and UpdateStatus changes only the status (for
// kinds that have one); generation grows when the spec changes; a write that
// changes nothing stores nothing; Delete honours the uid precondition. Every
// write is reported through writes.Observe, as the real writers do.
type Store[T Object] struct {
	kind schema.GroupKind
	what string // the kind in lower case, for errors

	mu       sync.Mutex // guards what follows
	clock    ports.Clock
	items    map[types.NamespacedName]T
	version  uint64  // last resourceVersion handed out, store-wide like etcd's
	failures []error // the next writes fail with these, in order
}

var (
	_ ports.Reader[*metav1.PartialObjectMetadata] = (*Store[*metav1.PartialObjectMetadata])(nil)
	_ ports.Writer[*metav1.PartialObjectMetadata] = (*Store[*metav1.PartialObjectMetadata])(nil)
)

// NewStore returns an empty store of objects of kind.
func NewStore[T Object](kind schema.GroupKind) *Store[T] {
	return &Store[T]{
		kind:  kind,
		what:  strings.ToLower(kind.Kind),
		items: map[types.NamespacedName]T{},
	}
}

// WithClock makes Create stamp creationTimestamp from clock (to the second,
// as the API server does) instead of the wall clock.
func (s *Store[T]) WithClock(clock ports.Clock) *Store[T] {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clock = clock
	return s
}

// Metadata reads the store's objects as metadata only, as the cache serves
// a kind it holds metadata-only (Pods, for the operator).
func (s *Store[T]) Metadata() ports.Reader[*metav1.PartialObjectMetadata] {
	return metadataReader[T]{s}
}

// Selected reads the store's objects whose labels sel matches, as the
// cache serves a kind narrowed by a label selector: the others are not
// found and not listed, and an object whose labels stop matching is gone
// from this view until they match again.
func (s *Store[T]) Selected(sel labels.Selector) ports.Reader[T] {
	if sel == nil {
		sel = labels.Everything()
	}
	return selectedReader[T]{s: s, sel: sel}
}

// FailNextWrites makes the next len(errs) writes fail, in order, with those
// errors (wrapped), whatever they write; for testing how callers handle
// conflicts, refusals and invalid objects.
func (s *Store[T]) FailNextWrites(errs ...error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failures = append(s.failures, errs...)
}

// Get implements ports.Reader: a copy of the stored object.
func (s *Store[T]) Get(ctx context.Context, key types.NamespacedName) (T, error) {
	var zero T
	if err := ctx.Err(); err != nil {
		return zero, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	obj, ok := s.items[key]
	if !ok {
		return zero, fmt.Errorf("%s %s: %w", s.what, key, ports.ErrNotFound)
	}
	return copyOf(obj), nil
}

// List implements ports.Reader: copies of the stored objects of namespace
// (every namespace when it is empty) that match opts, by namespace and
// name.
func (s *Store[T]) List(ctx context.Context, namespace string, opts ...ports.ListOption) ([]T, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	o := ports.NewListOptions(opts...)
	out := []T{}
	for _, obj := range s.All() {
		if (namespace == "" || obj.GetNamespace() == namespace) && o.Matches(obj.GetLabels()) {
			out = append(out, obj)
		}
	}
	return out, nil
}

// All returns copies of every stored object, by namespace and name.
func (s *Store[T]) All() []T {
	s.mu.Lock()
	out := make([]T, 0, len(s.items))
	for _, obj := range s.items {
		out = append(out, copyOf(obj))
	}
	s.mu.Unlock()
	slices.SortFunc(out, func(a, b T) int { return strings.Compare(keyOf(a).String(), keyOf(b).String()) })
	return out
}

// Create implements ports.Writer: it stores a copy of obj (status included)
// with a new resourceVersion, UID, generation 1 and creation time. An
// object of that name is ports.ErrAlreadyExists.
func (s *Store[T]) Create(ctx context.Context, obj T) (T, error) {
	var zero T
	if err := ctx.Err(); err != nil {
		return zero, err
	}
	if isNil(obj) || obj.GetName() == "" {
		return zero, fmt.Errorf("create %s: name is required: %w", s.what, ports.ErrInvalid)
	}
	key := keyOf(obj)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.failLocked("create", key); err != nil {
		return zero, err
	}
	if _, ok := s.items[key]; ok {
		return zero, fmt.Errorf("create %s %s: %w", s.what, key, ports.ErrAlreadyExists)
	}
	now := time.Now()
	if s.clock != nil {
		now = s.clock.Now()
	}
	next := copyOf(obj)
	next.SetUID(types.UID(fmt.Sprintf("memory-%s-uid-%d", s.what, s.version+1)))
	next.SetCreationTimestamp(metav1.NewTime(now.Truncate(time.Second)))
	next.SetGeneration(1)
	return s.commitLocked(ctx, next), nil
}

// Update implements ports.Writer: metadata and spec, keeping the stored
// status. An empty resourceVersion skips the conflict check (as a PUT
// without one does).
func (s *Store[T]) Update(ctx context.Context, obj T) (T, error) {
	return s.update(ctx, obj, false)
}

// UpdateStatus implements ports.Writer: the status only.
func (s *Store[T]) UpdateStatus(ctx context.Context, obj T) (T, error) {
	return s.update(ctx, obj, true)
}

func (s *Store[T]) update(ctx context.Context, obj T, status bool) (T, error) {
	var zero T
	if err := ctx.Err(); err != nil {
		return zero, err
	}
	what := "update " + s.what
	if status {
		what += " status"
	}
	if isNil(obj) {
		return zero, fmt.Errorf("%s: no object: %w", what, ports.ErrInvalid)
	}
	key := keyOf(obj)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.failLocked(what, key); err != nil {
		return zero, err
	}
	cur, ok := s.items[key]
	switch {
	case !ok:
		return zero, fmt.Errorf("%s %s: %w", what, key, ports.ErrNotFound)
	case obj.GetResourceVersion() != "" && obj.GetResourceVersion() != cur.GetResourceVersion():
		return zero, fmt.Errorf("%s %s: resourceVersion %s is not the stored %s: %w",
			what, key, obj.GetResourceVersion(), cur.GetResourceVersion(), ports.ErrConflict)
	}
	var next T
	if status {
		next = copyOf(cur)
		if !copyField(next, obj, "Status") {
			return zero, fmt.Errorf("%s %s: the kind has no status: %w", what, key, ports.ErrNotFound)
		}
	} else {
		next = copyOf(obj)
		copyField(next, cur, "Status")
		next.SetUID(cur.GetUID())
		next.SetCreationTimestamp(cur.GetCreationTimestamp())
		next.SetGeneration(cur.GetGeneration())
		if !fieldEqual(next, cur, "Spec") {
			next.SetGeneration(cur.GetGeneration() + 1)
		}
	}
	next.SetResourceVersion(cur.GetResourceVersion())
	if equality.Semantic.DeepEqual(next, cur) {
		return copyOf(cur), nil
	}
	return s.commitLocked(ctx, next), nil
}

// PatchMetadata implements ports.Writer as a merge into the stored object's
// labels and annotations: the others and every other field stay, and
// nothing is written (no new resourceVersion) when every key
// already has its value.
func (s *Store[T]) PatchMetadata(ctx context.Context, key types.NamespacedName, patch ports.MetadataPatch) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.failLocked("patch", key); err != nil {
		return err
	}
	cur, ok := s.items[key]
	if !ok {
		return fmt.Errorf("patch %s %s: %w", s.what, key, ports.ErrNotFound)
	}
	labels, annotations := merge(cur.GetLabels(), patch.Labels), merge(cur.GetAnnotations(), patch.Annotations)
	if maps.Equal(labels, cur.GetLabels()) && maps.Equal(annotations, cur.GetAnnotations()) {
		return nil
	}
	next := copyOf(cur)
	next.SetLabels(labels)
	next.SetAnnotations(annotations)
	s.commitLocked(ctx, next)
	return nil
}

// merge returns cur with add's keys set, or cur itself when add is empty.
func merge(cur, add map[string]string) map[string]string {
	if len(add) == 0 {
		return cur
	}
	out := make(map[string]string, len(cur)+len(add))
	maps.Copy(out, cur)
	maps.Copy(out, add)
	return out
}

// Delete implements ports.Writer. A non-empty uid that is not the stored
// object's is ports.ErrConflict.
func (s *Store[T]) Delete(ctx context.Context, key types.NamespacedName, uid types.UID) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.failLocked("delete", key); err != nil {
		return err
	}
	cur, ok := s.items[key]
	switch {
	case !ok:
		return fmt.Errorf("delete %s %s: %w", s.what, key, ports.ErrNotFound)
	case uid != "" && cur.GetUID() != uid:
		return fmt.Errorf("delete %s %s: uid %s is not the stored %s: %w", s.what, key, uid, cur.GetUID(), ports.ErrConflict)
	}
	delete(s.items, key)
	return nil
}

// failLocked returns the next injected failure, if any.
func (s *Store[T]) failLocked(what string, key types.NamespacedName) error {
	if len(s.failures) == 0 {
		return nil
	}
	err := s.failures[0]
	s.failures = s.failures[1:]
	return fmt.Errorf("%s %s %s: injected: %w", what, s.what, key, err)
}

// commitLocked stores next under a new resourceVersion and reports the
// write. It returns a copy of next.
func (s *Store[T]) commitLocked(ctx context.Context, next T) T {
	s.version++
	next.SetResourceVersion(strconv.FormatUint(s.version, 10))
	s.items[keyOf(next)] = next
	writes.Observe(ctx, s.kind, next.GetResourceVersion())
	return copyOf(next)
}

func keyOf(o metav1.Object) types.NamespacedName {
	return types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetName()}
}

// selectedReader serves the objects of a store that a selector matches.
type selectedReader[T Object] struct {
	s   *Store[T]
	sel labels.Selector
}

func (r selectedReader[T]) Get(ctx context.Context, key types.NamespacedName) (T, error) {
	obj, err := r.s.Get(ctx, key)
	if err != nil {
		return obj, err
	}
	if !r.sel.Matches(labels.Set(obj.GetLabels())) {
		var zero T
		return zero, fmt.Errorf("%s %s (not selected by %q): %w", r.s.what, key, r.sel, ports.ErrNotFound)
	}
	return obj, nil
}

func (r selectedReader[T]) List(ctx context.Context, namespace string, opts ...ports.ListOption) ([]T, error) {
	objs, err := r.s.List(ctx, namespace, opts...)
	if err != nil {
		return nil, err
	}
	out := objs[:0]
	for _, obj := range objs {
		if r.sel.Matches(labels.Set(obj.GetLabels())) {
			out = append(out, obj)
		}
	}
	return out, nil
}

// metadataReader serves a store's objects as PartialObjectMetadata.
type metadataReader[T Object] struct{ s *Store[T] }

func (m metadataReader[T]) Get(ctx context.Context, key types.NamespacedName) (*metav1.PartialObjectMetadata, error) {
	obj, err := m.s.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	return m.partial(obj), nil
}

func (m metadataReader[T]) List(ctx context.Context, namespace string, opts ...ports.ListOption) ([]*metav1.PartialObjectMetadata, error) {
	objs, err := m.s.List(ctx, namespace, opts...)
	if err != nil {
		return nil, err
	}
	out := make([]*metav1.PartialObjectMetadata, 0, len(objs))
	for _, obj := range objs {
		out = append(out, m.partial(obj))
	}
	return out, nil
}

// partial is obj, a copy of the store's, as the cache holds a metadata-only
// object: naming its kind.
func (m metadataReader[T]) partial(obj T) *metav1.PartialObjectMetadata {
	gvk := obj.GetObjectKind().GroupVersionKind()
	if gvk.Empty() {
		gvk = m.s.kind.WithVersion("")
	}
	p := meta.AsPartialObjectMetadata(obj)
	p.SetGroupVersionKind(gvk)
	return p
}

// copyField sets dst's struct field name to a deep copy of src's; false
// when the type has no such field.
func copyField[T Object](dst, src T, name string) bool {
	d, ok := field(dst, name)
	if !ok {
		return false
	}
	sv, _ := field(src, name)
	d.Set(reflect.ValueOf(copyOfValue(sv.Interface())))
	return true
}

// fieldEqual reports whether a's and b's field name are semantically equal
// (true when the type has no such field).
func fieldEqual[T Object](a, b T, name string) bool {
	av, ok := field(a, name)
	if !ok {
		return true
	}
	bv, _ := field(b, name)
	return equality.Semantic.DeepEqual(av.Interface(), bv.Interface())
}

func field[T Object](obj T, name string) (reflect.Value, bool) {
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return reflect.Value{}, false
	}
	f := v.Elem().FieldByName(name)
	return f, f.IsValid() && f.CanSet()
}

// copyOfValue deep-copies a field value through its DeepCopy method when it
// has one (every API struct does); plain values are copied by assignment.
func copyOfValue(v any) any {
	rv := reflect.ValueOf(v)
	ptr := reflect.New(rv.Type())
	ptr.Elem().Set(rv)
	if m := ptr.MethodByName("DeepCopy"); m.IsValid() {
		return m.Call(nil)[0].Elem().Interface()
	}
	return v
}

func copyOf[T Object](obj T) T {
	return obj.DeepCopyObject().(T)
}

func isNil[T Object](obj T) bool {
	v := reflect.ValueOf(obj)
	return !v.IsValid() || (v.Kind() == reflect.Pointer && v.IsNil())
}
