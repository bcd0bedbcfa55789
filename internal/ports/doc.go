// Package ports declares the interfaces between the operator's domain and the
// world around it.
//
// # What "port" means here
//
// In this repository a port is any interface that crosses the hexagon's edge,
// in either direction:
//
//   - Inbound ports are implemented by the domain and called by driving
//     adapters: a [Reconciler] is called by the controller loop, a
//     [Defaulter] or [Validator] by the webhook server.
//   - Outbound ports are implemented by driven adapters and called by the
//     domain: [Reader] by the cache, [Writer] by the client, [EventRecorder]
//     by the events adapter, [Clock] by the clock.
//   - Runtime ports connect driving adapters to each other without one
//     importing the other: the controller loop consumes a [Source] from
//     the cache and waits on a [LeaderElector]; the health server takes
//     a [HealthCheck] per part.
//
// The object ports are generic over the kind: Reader[*appsv1.ReplicaSet],
// Writer[*corev1.Pod], Defaulter[*corev1.Pod], Validator[*chaosv1.ChaosPod].
// One port, one adapter and one in-memory twin serve every kind, held
// together by one contract suite (portstest.RunObjects), and the domain
// still reads typed fields.
//
// # A tour
//
// A change in the cluster reaches the operator through a [Source], which
// hands objects to an [EventHandler]; the controller loop turns them into a
// [Request] for a [Reconciler] once every Source it watches has synced and
// [LeaderElector] says this replica leads. The ReplicaSet reconciler reads
// ReplicaSets' metadata through a Reader[*metav1.PartialObjectMetadata] and
// labels through a Writer's PatchMetadata; the ChaosPod reconciler reads ChaosPods and Pods (the
// latter as metadata only) and creates, updates and deletes through
// Writers, timing its Pods with a [Clock]. Both tell people what they did
// through an [EventRecorder].
//
// Every write reports its resourceVersion to the reconcile's
// [WriteObserver] (see [ObserveWrite]), and the next reconcile of the same
// request waits until the Source of that kind has applied it
// ([Source.HasApplied]): the operator reads its own writes.
//
// On the admission path the webhook server asks a [Defaulter] or a
// [Validator] of the request's type. A [HealthCheck] per part feeds
// /healthz and /readyz.
//
// Each interface names one role and is documented as "X knows how to …".
// Interfaces stay small so a test double is a few lines and so one adapter
// type can satisfy several of them.
//
// # Errors
//
// Errors cross ports as the sentinel errors of this package ([ErrNotFound],
// [ErrConflict], [ErrAlreadyExists], [ErrInvalid], [ErrForbidden]), wrapped
// with context and tested with errors.Is; never as Kubernetes API errors.
// [Terminal] marks an error that a retry cannot fix. A [StoreError]
// carries the store's own words beside the sentinel, so that [Cause] can
// tell users why the API server refused a request.
//
// This package imports nothing of the module but api/..., and no client,
// transport, logging or dependency-injection library.
package ports
