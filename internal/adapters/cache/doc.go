// Package cache plugs the operator's reader and runtime ports into client-go
// shared informers: one list and one watch per kind, kept in memory, read by
// reconcilers and fed to the controller loop as change notifications.
//
// # What is cached, and how
//
//   - ReplicaSets, as typed objects listed and watched through the typed
//     client (kubeclient.Interface, protobuf on the wire), read through
//     [Cache.GetReplicaSet] (ports.ReplicaSetReader).
//   - Pods, metadata only (the metadata client, which asks the server for
//     PartialObjectMetadata): the operator maps a Pod to the object that
//     controls it and never reads a Pod's spec or status, so there is no
//     reason to hold them in memory. The Pods are indexed by their
//     controller owner ([IndexControllerOwner]) and listed through
//     [Cache.ListControlledPods] (ports.PodMetadataLister).
//   - ChaosPods, in their own [ChaosPodCache], through the dynamic client.
//
// The cache builds each informer itself, from a ListWatch over the client,
// rather than from client-go's informer factories: the typed factory is
// built on client-go's clientset, and with the metadata and dynamic
// factories it links every built-in API group into the binary (see package
// kubeclient). As the factories do, it asks the client whether it can
// serve watch-lists, client-go's streamed initial list: a fake must say it
// cannot (client-go's fakes do), or its informers never sync.
//
// Every informer is restricted to [Options.Namespace] when it is set (the
// operator's --namespace flag), and drops metadata.managedFields before an
// object is stored unless [Options.KeepManagedFields] says otherwise: the
// operator never reads them and they are often the largest part of an
// object.
//
// Objects handed out by the cache are the cached ones, shared with every
// other reader. They are read-only: DeepCopy before changing anything.
// Cached objects also share equal metadata with each other (namespaces,
// label and annotation maps, owner reference lists; a ReplicaSet's
// selector and template labels with its Pods'): the Pods of one owner
// mostly carry the same ones, and sharing them halves a metadata-only
// Pod's memory. A change made in place to one object's labels would show
// in others' too.
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
// # An API server away
//
// Every informer's lists and watches wait out an API server that refuses
// connections (a restart, a moved endpoint), retrying at most every two to
// three seconds and logging when the wait starts and ends, instead of
// handing the refusal to client-go's reflector, whose back-off grows to
// 30-60 s and outlasts a short restart by as much. Every other error is
// the reflector's, back-off included: a server that answers 429 or 5xx is
// loaded, and must not be asked more often.
//
// # Other built-in kinds
//
// [NewResource] caches another built-in resource in the same cache
// (namespace, managedFields stripping, laziness alike), as a ports.Source
// and a ports.ObjectReader of its typed objects: what a controller added
// with app.Controller reads. On a *kubeclient.Clientset it reads any kind
// an informer can list and watch in the groups of kubeclient.Scheme,
// through the group's REST client, decoding into the kind's type; on
// another kubeclient.Interface (a test's fake) only the kinds the interface
// has clients for. Kinds of other groups (RBAC, batch, ...) are refused:
// serving them would mean linking their groups. Its informer is keyed by
// the resource's path, for example "v1/configmaps", in readiness messages
// and metrics.
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
