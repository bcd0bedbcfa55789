package cache

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
)

// source is one kind's change notifications, as the controller loop's
// Source consumes them.
type source struct {
	cache *Cache
	key   informerKey
	gk    schema.GroupKind
	build func() toolscache.SharedIndexInformer
	// decode, when set, turns what the informer lists into the object the
	// cache holds, before the cache's transform.
	decode func(any) (any, error)
}

// informerKey names one informer of the cache: a kind, and the label
// selector that narrows it (empty for every object).
type informerKey struct {
	kind, selector string
}

// String names the informer in errors and logs: the kind, and its
// selector in brackets when it has one.
func (k informerKey) String() string {
	if k.selector == "" {
		return k.kind
	}
	return k.kind + "[" + k.selector + "]"
}

// GroupKind is the kind's group and name.
func (s *source) GroupKind() schema.GroupKind { return s.gk }

// AddEventHandler registers h on the kind's informer, creating it if
// needed; h gets the informer's objects and tombstones as they come.
func (s *source) AddEventHandler(h toolscache.ResourceEventHandler) error {
	if h == nil {
		return errors.New("add event handler: nil handler")
	}
	inf, err := s.cache.informer(s)
	if err != nil {
		return fmt.Errorf("add %s event handler: %w", s.key, err)
	}
	if _, err := inf.AddEventHandler(h); err != nil {
		return fmt.Errorf("add %s event handler: %w", s.key, err)
	}
	return nil
}

// WaitForSync waits until the kind's informer has listed.
func (s *source) WaitForSync(ctx context.Context) error {
	select {
	case <-s.cache.started:
	case <-ctx.Done():
		return ctx.Err()
	}
	_, err := s.cache.syncedInformer(ctx, s)
	return err
}

// HasApplied reports whether the informer's store has applied
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
