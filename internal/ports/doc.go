// Package ports declares the interfaces between the operator's domain and
// the world around it, one per role and generic over the kind where the
// shape repeats: the domain implements [Reconciler], [Defaulter] and
// [Validator]; it calls [Reader], [Writer], [EventRecorder] and [Clock],
// which adapters implement and one contract suite (test/portstest) holds
// the real and the in-memory ones to.
//
// Errors cross ports as this package's sentinels ([ErrNotFound],
// [ErrConflict], [ErrAlreadyExists], [ErrInvalid], [ErrForbidden]), never
// as Kubernetes API errors; [Terminal] marks one no retry can fix, and a
// [StoreError] carries the API server's words for [Cause].
//
// This package imports nothing of the module but api/..., and no client,
// transport, logging or dependency-injection library.
package ports
