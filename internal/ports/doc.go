// Package ports declares the interfaces between the operator's domain and the
// world around it.
//
// # What "port" means here
//
// In this repository a port is any interface that crosses the hexagon's edge,
// in either direction:
//
//   - Inbound ports are implemented by the domain and called by driving
//     adapters: a [Reconciler] is called by the controller loop, admission
//     rules by the webhook server.
//   - Outbound ports are implemented by driven adapters and called by the
//     domain: [ReplicaSetReader] and [ReplicaSetLabeler] by the cache and the
//     client, [EventRecorder] by the events adapter, [Clock] by the clock.
//   - Runtime ports connect driving adapters to each other without one
//     importing the other: the controller loop consumes a [Source] and a
//     [CacheSync] from the cache, and waits on a [LeaderElector].
//
// Each interface names one role, lives in its own file and is documented as
// "X knows how to …". Interfaces stay small so a test double is a few lines
// and so one adapter type can satisfy several of them.
//
// # Errors
//
// Errors cross ports as the sentinel errors of this package ([ErrNotFound],
// [ErrConflict], [ErrAlreadyExists], [ErrInvalid], [ErrForbidden]), wrapped
// with context and tested with errors.Is; never as Kubernetes API errors.
// [Terminal] marks an error that a retry cannot fix.
//
// This package imports nothing of the module but api/..., and no client,
// transport, logging or dependency-injection library.
package ports
