// Package cache plugs the operator's reader and source ports into client-go
// shared informers: one list and one watch per kind, kept in memory, read by
// reconcilers (ports.Reader: Get and List) and fed to the controller loop as
// change notifications (ports.Source).
//
// The cache knows no kind by itself: the composition root asks it for each
// kind it reads or watches, as a [Resource]:
//
//   - [NewResource]: typed objects of a built-in kind of the [Typed]
//     groups, through the clientset's REST client for the group (protobuf
//     on the wire);
//   - [NewMetadataResource]: metadata only, through the metadata client, for
//     a kind whose spec and status no reader looks at; a [Trim] drops
//     metadata no reader needs either (the Pods' labels and annotations);
//   - [NewDynamicResource]: a kind of any other group, such as a CRD's,
//     through the dynamic client, decoded into typed objects as they arrive.
//
// One informer serves each kind, keyed by its name: asking again for a kind
// the same way shares it (two controllers watching Pods alike share one
// informer), asking for it another way is an error. An informer starts when
// its kind is first used (a handler, a sync wait or a read), so a process
// lists and watches only what it uses. Every informer is restricted to
// [Options.Namespace] when it is set and drops metadata.managedFields, which
// the operator never reads and which are often most of an object.
//
// [Cache.Start] returns at once; [Cache.HasSynced], also the readiness check
// [HealthCheckName], turns true once every started informer has delivered
// its initial list. Reads wait until their kind has synced rather than
// answer "not found" from an empty cache. Objects handed out are the cached
// ones, shared with every reader and with each other (equal metadata is
// interned): never change them, DeepCopy first.
//
// operator_cache_objects{kind} counts the objects each informer holds.
package cache
