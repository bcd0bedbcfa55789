// Package cache plugs the operator's reader and runtime ports into client-go
// shared informers: one list and one watch per kind, kept in memory, read by
// reconcilers and fed to the controller loop as change notifications.
//
// # What is cached, and how
//
//   - ReplicaSets, as typed objects (informers.SharedInformerFactory), read
//     through [Cache.GetReplicaSet] (ports.ReplicaSetReader).
//   - Pods, metadata only (metadatainformer): the operator maps a Pod to the
//     object that controls it and never reads a Pod's spec or status, so
//     there is no reason to hold them in memory. The Pods are indexed by
//     their controller owner ([IndexControllerOwner]) and listed through
//     [Cache.ListControlledPods] (ports.PodMetadataLister).
//
// Every informer is restricted to [Options.Namespace] when it is set (the
// operator's --namespace flag), and drops metadata.managedFields before an
// object is stored unless [Options.KeepManagedFields] says otherwise: the
// operator never reads them and they are often the largest part of an
// object.
//
// Objects handed out by the cache are the cached ones, shared with every
// other reader. They are read-only: DeepCopy before changing anything.
//
// # Lazy informers
//
// An informer exists only once someone asked for its kind: through
// [Cache.ReplicaSets] or [Cache.Pods] AddEventHandler, or a read. Kinds asked
// for before [Cache.Start] are started by it; kinds asked for later start
// at once. So a process that runs only webhooks, or only one controller,
// lists and watches nothing it does not use.
//
// # Lifecycle and readiness
//
// [Cache.Start] returns at once; the informers list and watch in the
// background until [Cache.Stop]. [Cache.HasSynced] (ports.CacheSync) turns
// true when every started informer has delivered its initial list, and the
// same condition is the readiness check [HealthCheckName]
// (ports.HealthCheck). Reads block until their kind has synced (bounded by
// their context) rather than answering "not found" from an empty cache.
//
// # Other built-in kinds
//
// [NewResource] caches any other resource of the typed clientset on the same
// factory (managedFields stripped alike), as a ports.Source and a
// ports.ObjectReader of its typed objects: what a controller added with
// app.Controller reads. Its informer is keyed by the resource's path, for
// example "v1/configmaps", in readiness messages and metrics.
//
// # Freshness
//
// Every source is a ports.CacheFreshness: it reports whether its informer
// store has applied a resourceVersion, from client-go's record of the last
// one it applied. The controller loop uses it to read its own writes.
//
// # Metrics
//
// operator_cache_objects{kind} counts the objects each informer holds, read
// at scrape time.
package cache
