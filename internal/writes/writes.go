package writes

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Observer is told that the operator just wrote an object of kind, which
// the API server stored at resourceVersion, so that the next reconcile of
// the same request does not act on a cache older than that write.
type Observer func(kind schema.GroupKind, resourceVersion string)

type observerKey struct{}

// WithObserver returns a context whose writes are reported to o.
func WithObserver(ctx context.Context, o Observer) context.Context {
	return context.WithValue(ctx, observerKey{}, o)
}

// Observe reports a write to the observer in ctx, if there is one.
// Writers call it unconditionally: outside a reconcile it does nothing.
func Observe(ctx context.Context, kind schema.GroupKind, resourceVersion string) {
	if o, ok := ctx.Value(observerKey{}).(Observer); ok && o != nil && resourceVersion != "" {
		o(kind, resourceVersion)
	}
}
