package ports

import "context"

// CacheSync knows whether the read caches have caught up with the API server.
// Readiness and the controller loop wait on it.
type CacheSync interface {
	// HasSynced reports whether every cache has completed its initial list.
	HasSynced() bool
	// WaitForSync blocks until HasSynced or ctx is done, and returns
	// ctx.Err() in the latter case.
	WaitForSync(ctx context.Context) error
}
