// Package cache serves the reader port and the controllers' sources from
// client-go shared informers: one list and one watch per kind, held in
// memory, read by reconcilers (ports.Reader) and delivered to controllers.
//
// The composition root asks for each kind it reads or watches, as a
// [Resource]: [NewResource] for typed objects of a built-in kind,
// [NewMetadataResource] for metadata only, and [NewDynamicResource] for any
// other kind, such as a CRD's; each optionally narrowed to the objects a
// label [Selector] matches and [Trim]med of what no reader looks at. One
// informer serves each kind and selector, keyed by both, and starts when
// first used; asking for them again the same way shares it, another way
// is an error. [Options] restrict every informer to one namespace or keep
// managedFields.
//
// [Cache.Start] returns at once; [Cache.HasSynced] (also the readiness
// check [HealthCheckName]) turns true once every started informer has
// listed. Reads wait until their kind has synced. Objects handed out are
// the cached ones, shared with every reader (equal metadata is interned):
// DeepCopy before changing them. operator_cache_objects{kind,selector}
// counts them.
package cache
