// Package writes carries read-your-own-writes notices from the writers to
// the controller loop, through the context: the controller puts an
// [Observer] into each reconcile's context, and every writer reports each
// successful write's kind and resourceVersion with [Observe].
package writes
