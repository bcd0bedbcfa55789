package cache

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/hexagonal-operator/operator/internal/ports"
)

// source is one kind's change notifications.
type source struct {
	cache *Cache
	key   string // the informer's key in the cache: the kind's name
	gk    schema.GroupKind
	build func() toolscache.SharedIndexInformer
	// decode, when set, turns what the informer lists into the object the
	// cache holds, before the cache's transform.
	decode func(any) (any, error)
}

var _ ports.Source = (*source)(nil)

// GroupKind implements ports.Source.
func (s *source) GroupKind() schema.GroupKind { return s.gk }

// AddEventHandler implements ports.Source, creating the kind's informer if
// needed.
func (s *source) AddEventHandler(h ports.EventHandler) error {
	if h == nil {
		return errors.New("add event handler: nil handler")
	}
	inf, err := s.cache.informer(s)
	if err != nil {
		return fmt.Errorf("add %s event handler: %w", s.key, err)
	}
	if _, err := inf.AddEventHandler(eventHandler{h: h}); err != nil {
		return fmt.Errorf("add %s event handler: %w", s.key, err)
	}
	return nil
}

// WaitForSync implements ports.Source: it waits until the kind's informer
// has listed.
func (s *source) WaitForSync(ctx context.Context) error {
	select {
	case <-s.cache.started:
	case <-ctx.Done():
		return ctx.Err()
	}
	_, err := s.cache.syncedInformer(ctx, s)
	return err
}

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

// HasApplied implements ports.Source from the store's last applied
// resourceVersion; true when it cannot tell, never blocking a reconcile.
func (s *source) HasApplied(resourceVersion string) bool {
	inf, err := s.cache.informer(s)
	if err != nil {
		return true
	}
	want, errWant := strconv.ParseUint(resourceVersion, 10, 64)
	have, errHave := strconv.ParseUint(inf.GetIndexer().LastStoreSyncResourceVersion(), 10, 64)
	return errWant != nil || errHave != nil || have >= want
}
