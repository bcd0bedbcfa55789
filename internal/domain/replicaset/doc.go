// Package replicaset holds the ReplicaSet reconciler: every ReplicaSet
// carries the label hello=world. It reads the ReplicaSet from the cache,
// writes nothing when the label is right, and otherwise sets just that
// label with ports.Writer's PatchMetadata, so labels and fields someone
// else writes at the same time survive. A ReplicaSet that is gone is not
// an error.
package replicaset
