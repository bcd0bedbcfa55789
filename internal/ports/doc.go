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
// # A tour
//
// A change in the cluster reaches the operator through a [Source], which
// hands objects to an [EventHandler]; the controller loop turns them into a
// [Request] for a [Reconciler] once [CacheSync] says the caches are full and
// [LeaderElector] says this replica leads. The ReplicaSet reconciler reads
// through [ReplicaSetReader] and [PodMetadataLister] and writes through
// [ReplicaSetLabeler]; the ChaosPod reconciler reads through
// [ChaosPodReader] and [PodReader] and writes through [ChaosPodWriter] and
// [PodWriter], timing its Pods with a [Clock]. Both tell people what they
// did through an [EventRecorder]. A controller added from outside reads any
// built-in kind through [ObjectReader] and annotates it through
// [AnnotationWriter].
//
// Every write reports its resourceVersion to a [WriteObserver] (see
// [ObserveWrite]), and the next reconcile of the same request waits until
// the [Source]'s cache, a [CacheFreshness], has applied it: the operator
// reads its own writes.
//
// On the admission path the webhook server asks a [PodMutator] and a
// [PodValidator] about Pods, a [ChaosPodDefaulter] and a [ChaosPodValidator]
// about ChaosPods, serving with the certificate of a [CertSource]. A
// [HealthCheck] per part feeds /healthz and /readyz.
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
