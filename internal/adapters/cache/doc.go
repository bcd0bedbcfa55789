// Package cache plugs the operator's reader and runtime ports into client-go
// shared informers: one list and one watch per kind, kept in memory, read by
// reconcilers and fed to the controller loop as change notifications.
//
// # What is cached, and how
//
// The cache knows no kind by itself: the composition root asks it for each
// kind it reads or watches, as a [Resource] (a ports.Reader of the kind's
// objects and a ports.Source of their changes, on one informer):
//
//   - [NewResource]: typed objects listed and watched through the typed
//     clientset (kubernetes.Interface, protobuf on the wire): any built-in
//     kind a controller added with app.Controller reads.
//   - [NewMetadataResource]: metadata only (the metadata client, which asks
//     the server for PartialObjectMetadata), each object naming its kind.
//     The operator decides on a ReplicaSet's labels alone, maps a Pod to
//     the object that controls it and reads its UID and times, never a
//     spec or status, so there is no reason to hold more in memory; a
//     [Trim] drops the metadata no reader of a kind looks at (the Pods'
//     labels and annotations).
//   - [NewDynamicResource]: a kind outside the [Typed] groups, such as the
//     ChaosPod CRD, through the dynamic client, decoded into typed objects
//     as they arrive so readers never see unstructured maps.
//
// One informer serves each kind, keyed by the kind's name (the label of
// its metrics and readiness messages); asking again for a kind the same way
// shares it, asking for it another way is an error.
//
// The cache builds each informer itself, from a ListWatch over the client,
// rather than from client-go's informer factories, so that every kind,
// typed, metadata-only or dynamic, gets the same transforms, patience and
// metrics. As the factories do, it asks the client whether it can
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
// An informer exists only once someone used its kind: a Source's
// AddEventHandler or WaitForSync, or a read. Kinds used before
// [Cache.Start] are started by it; kinds used later start at once. So a
// process that runs only webhooks, or only one controller, lists and
// watches nothing it does not use.
//
// # Lifecycle and readiness
//
// [Cache.Start] returns at once; the informers list and watch in the
// background until [Cache.Stop]. [Cache.HasSynced] turns true when every
// started informer has delivered its initial list, and the same condition
// is the readiness check [HealthCheckName] (ports.HealthCheck). A Source's
// WaitForSync waits for its own kind only, which is what a controller
// waits for before its workers start. Reads block until their kind has
// synced (bounded by their context) rather than answering "not found" from
// an empty cache.
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
// # Which built-in kinds
//
// On a *kubernetes.Clientset, [NewResource] reads any kind an informer can
// list and watch in the groups [Typed] names, through the group's REST
// client, decoding into the kind's type; on another kubernetes.Interface
// (a test's fake) only the kinds it has typed clients for. Kinds of other
// groups (RBAC, batch, ...) are refused: the cache knows which of their
// kinds are cluster-scoped only for these groups.
//
// # Freshness
//
// Every Resource reports whether its informer store has applied a
// resourceVersion (ports.Source's HasApplied), from client-go's record of
// the last one it applied. The controller loop uses it to read its own
// writes.
//
// # Metrics
//
// operator_cache_objects{kind} counts the objects each informer holds, read
// at scrape time.
package cache
