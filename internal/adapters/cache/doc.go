// Package cache serves the reader port and the controllers' sources from
// client-go shared informers: one list and one watch per kind, held in
// memory, read by reconcilers (ports.Reader) and delivered to controllers.
//
// The composition root asks for each kind it reads or watches, as a
// [Resource]: [NewResource] for typed objects of a built-in kind,
// [NewMetadataResource] for metadata only (optionally [Trim]med), and
// [NewDynamicResource] for any other kind, such as a CRD's. One informer
// serves each kind, keyed by its name, and starts when first used; asking
// for a kind again the same way shares it, another way is an error.
// [Options] restrict them to one namespace or keep managedFields.
//
// [Cache.Start] returns at once; [Cache.HasSynced] (also the readiness
// check [HealthCheckName]) turns true once every started informer has
// listed. Reads wait until their kind has synced. Objects handed out are
// the cached ones, shared with every reader (equal metadata is interned):
// DeepCopy before changing them. operator_cache_objects{kind} counts them.
package cache
