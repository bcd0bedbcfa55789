package ports

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// Request names the object a reconcile is about. It carries no payload on
// purpose: a reconciler reads current state instead of trusting an event.
type Request struct {
	types.NamespacedName
}

// Result tells the controller loop what to do after a successful reconcile.
// The zero value means "done until something changes".
type Result struct {
	// RequeueAfter, when positive, reconciles the same request again after
	// this long (for example at a ChaosPod's next stop time).
	RequeueAfter time.Duration
}

// Reconciler knows how to drive one object towards its desired state.
//
// Reconcile must be level-based and idempotent: read current state, compute,
// write only the difference. A returned error is retried with back-off unless
// it is marked with [Terminal].
type Reconciler interface {
	Reconcile(ctx context.Context, req Request) (Result, error)
}

// ReconcilerFunc adapts a function to [Reconciler].
type ReconcilerFunc func(ctx context.Context, req Request) (Result, error)

// Reconcile calls f.
func (f ReconcilerFunc) Reconcile(ctx context.Context, req Request) (Result, error) {
	return f(ctx, req)
}
