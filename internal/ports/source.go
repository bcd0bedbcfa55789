package ports

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// EventHandler knows how to react to changes of watched objects. Handlers
// only map objects to requests; they carry no reconcile logic.
//
// Objects passed to a handler are shared with the cache and must not be
// mutated. For deletions the last known state is passed (a tombstone is
// unwrapped by the source).
type EventHandler interface {
	OnAdd(obj metav1.Object)
	OnUpdate(oldObj, newObj metav1.Object)
	OnDelete(obj metav1.Object)
}

// Source knows how to deliver change notifications for one kind of object,
// typically from a shared informer, and how far its cache has come.
type Source interface {
	// GroupKind names the kind, as writes report it to a [WriteObserver].
	GroupKind() schema.GroupKind
	// AddEventHandler registers h; it receives every object already known
	// as an add, then every change.
	AddEventHandler(h EventHandler) error
	// WaitForSync blocks until the source has delivered its initial list,
	// or ctx is done, or the source stopped (an error then).
	WaitForSync(ctx context.Context) error
	// HasApplied reports whether the source's cache holds the state at
	// resourceVersion or later (true when that cannot be told), so a
	// reconcile can wait to read its own writes.
	HasApplied(resourceVersion string) bool
}
