package ports

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
// typically from a shared informer.
type Source interface {
	// Kind names the watched kind for logs, for example "ReplicaSet".
	Kind() string
	// AddEventHandler registers h. Objects already in the cache are
	// delivered to h as additions.
	AddEventHandler(h EventHandler) error
}
