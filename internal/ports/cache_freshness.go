package ports

// CacheFreshness knows how to tell whether the cache behind a [Source] has
// applied a given resourceVersion of its kind, or a later one. The
// controller loop asks it, before reconciling a request, about the writes
// the previous reconcile of that request made (see [WriteObserver]).
//
// Resource versions are opaque to clients except for this one use, which
// the API server supports: within one resource they grow with every write.
// An implementation that cannot compare them (an unparsable version, a
// cache that does not track its own) reports true, so that it never blocks.
type CacheFreshness interface {
	HasApplied(resourceVersion string) bool
}
