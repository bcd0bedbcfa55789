package ports

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// WriteObserver is told that the operator just wrote an object, so that the
// next reconcile of the same request does not act on a cache older than
// that write (read-your-own-writes).
//
// The controller loop puts one in each reconcile's context; writers report
// to it through [ObserveWrite] after every successful create, update or
// patch. kind is the written object's kind, matched against
// [Source.GroupKind]; resourceVersion is the one the API server returned.
type WriteObserver func(kind schema.GroupKind, resourceVersion string)

type writeObserverKey struct{}

// WithWriteObserver returns a context whose writes are reported to o.
func WithWriteObserver(ctx context.Context, o WriteObserver) context.Context {
	return context.WithValue(ctx, writeObserverKey{}, o)
}

// ObserveWrite reports a write to the observer in ctx, if there is one.
// Writers call it unconditionally: outside a reconcile it does nothing.
func ObserveWrite(ctx context.Context, kind schema.GroupKind, resourceVersion string) {
	if o, ok := ctx.Value(writeObserverKey{}).(WriteObserver); ok && o != nil && resourceVersion != "" {
		o(kind, resourceVersion)
	}
}
