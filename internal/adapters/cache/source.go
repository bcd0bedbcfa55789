package cache

import (
	"errors"
	"fmt"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/hexagonal-operator/operator/internal/ports"
)

// source is one kind's change notifications.
type source struct {
	cache *Cache
	// kind keys the informer in the cache (and names it in readiness and
	// metrics); build makes it on first use.
	kind  string
	build func() toolscache.SharedIndexInformer
}

var (
	_ ports.Source         = (*source)(nil)
	_ ports.CacheFreshness = (*source)(nil)
)

func (s *source) Kind() string { return s.kind }

// AddEventHandler asks for the kind's informer and registers h on it.
// Objects already cached reach h as additions.
func (s *source) AddEventHandler(h ports.EventHandler) error {
	if h == nil {
		return errors.New("add event handler: nil handler")
	}
	inf, err := s.cache.informer(s.kind, s.build)
	if err != nil {
		return fmt.Errorf("add %s event handler: %w", s.kind, err)
	}
	if _, err := inf.AddEventHandler(eventHandler{h: h}); err != nil {
		return fmt.Errorf("add %s event handler: %w", s.kind, err)
	}
	return nil
}

// eventHandler adapts a ports.EventHandler to client-go's handler: it
// unwraps deletion tombstones, which client-go hands out when a watch missed
// a deletion, so that ports see only objects.
type eventHandler struct{ h ports.EventHandler }

func (e eventHandler) OnAdd(obj any, _ bool) {
	if o, ok := obj.(metav1.Object); ok {
		e.h.OnAdd(o)
	}
}

func (e eventHandler) OnUpdate(oldObj, newObj any) {
	o, okOld := oldObj.(metav1.Object)
	n, okNew := newObj.(metav1.Object)
	if okOld && okNew {
		e.h.OnUpdate(o, n)
	}
}

func (e eventHandler) OnDelete(obj any) {
	if tombstone, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	if o, ok := obj.(metav1.Object); ok {
		e.h.OnDelete(o)
	}
}

// HasApplied implements ports.CacheFreshness: whether the kind's informer
// store has applied resourceVersion or a later one.
func (s *source) HasApplied(resourceVersion string) bool {
	inf, err := s.cache.informer(s.kind, s.build)
	if err != nil {
		return true // a stopped cache serves no reads to protect
	}
	return storeHasApplied(inf.GetIndexer(), resourceVersion)
}

// storeHasApplied compares the store's last applied resourceVersion (which
// client-go tracks with its AtomicFIFO, on by default) with rv. It answers
// true when it cannot compare, so that it never blocks a reconcile on a
// question it cannot answer.
func storeHasApplied(store toolscache.Indexer, rv string) bool {
	want, err := strconv.ParseUint(rv, 10, 64)
	if err != nil {
		return true
	}
	have, err := strconv.ParseUint(store.LastStoreSyncResourceVersion(), 10, 64)
	if err != nil {
		return true
	}
	return have >= want
}
