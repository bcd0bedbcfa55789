package memory

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/hexagonal-operator/operator/internal/ports"
)

// Source is the twin of an informer-backed ports.Source: it remembers the
// objects it was told about, replays them to a new handler as additions,
// and delivers every change to every handler synchronously, in order.
//
// Objects go to handlers as given; callers that keep a reference should
// pass a copy.
type Source struct {
	kind schema.GroupKind

	// deliver is held while handlers run, so that deliveries never
	// interleave and a new handler's replay never crosses a change.
	deliver  sync.Mutex
	mu       sync.Mutex // guards what follows
	handlers []ports.EventHandler
	objects  map[types.NamespacedName]metav1.Object
}

var _ ports.Source = (*Source)(nil)

// NewSource returns a Source for kind (as GroupKind reports it).
func NewSource(kind schema.GroupKind) *Source {
	return &Source{kind: kind, objects: map[types.NamespacedName]metav1.Object{}}
}

// GroupKind implements ports.Source.
func (s *Source) GroupKind() schema.GroupKind { return s.kind }

// WaitForSync implements ports.Source: a memory source is always synced.
func (s *Source) WaitForSync(ctx context.Context) error { return ctx.Err() }

// HasApplied implements ports.Source: a memory source delivers every write
// before the write returns, so it has applied everything.
func (s *Source) HasApplied(string) bool { return true }

// AddEventHandler implements ports.Source: h first receives every known
// object as an addition, sorted by namespace and name.
func (s *Source) AddEventHandler(h ports.EventHandler) error {
	if h == nil {
		return errors.New("add event handler: nil handler")
	}
	s.deliver.Lock()
	defer s.deliver.Unlock()
	s.mu.Lock()
	s.handlers = append(s.handlers, h)
	known := make([]metav1.Object, 0, len(s.objects))
	for _, o := range s.objects {
		known = append(known, o)
	}
	s.mu.Unlock()
	slices.SortFunc(known, func(a, b metav1.Object) int {
		return strings.Compare(keyOf(a).String(), keyOf(b).String())
	})
	for _, o := range known {
		h.OnAdd(o)
	}
	return nil
}

// Add records obj and delivers it as an addition.
func (s *Source) Add(obj metav1.Object) {
	s.deliver.Lock()
	defer s.deliver.Unlock()
	s.add(obj)
}

// Update records newObj and delivers the change from oldObj.
func (s *Source) Update(oldObj, newObj metav1.Object) {
	s.deliver.Lock()
	defer s.deliver.Unlock()
	s.update(oldObj, newObj)
}

// Delete forgets obj and delivers its deletion with obj as the last known
// state.
func (s *Source) Delete(obj metav1.Object) {
	s.deliver.Lock()
	defer s.deliver.Unlock()
	s.delete(obj)
}

// add, update and delete need s.deliver held.

func (s *Source) add(obj metav1.Object) {
	for _, h := range s.record(obj, false) {
		h.OnAdd(obj)
	}
}

func (s *Source) update(oldObj, newObj metav1.Object) {
	for _, h := range s.record(newObj, false) {
		h.OnUpdate(oldObj, newObj)
	}
}

func (s *Source) delete(obj metav1.Object) {
	for _, h := range s.record(obj, true) {
		h.OnDelete(obj)
	}
}

// record stores or forgets obj and returns the handlers to tell.
func (s *Source) record(obj metav1.Object, forget bool) []ports.EventHandler {
	s.mu.Lock()
	defer s.mu.Unlock()
	if forget {
		delete(s.objects, keyOf(obj))
	} else {
		s.objects[keyOf(obj)] = obj
	}
	return slices.Clone(s.handlers)
}

func keyOf(o metav1.Object) types.NamespacedName {
	return types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetName()}
}
