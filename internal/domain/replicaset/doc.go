// Package replicaset holds the ReplicaSet reconciler: every ReplicaSet
// carries the label hello=world.
//
// The reconciler is level-based. It reads the ReplicaSet (from the cache,
// through ports.Reader), writes nothing when the label is already right,
// and otherwise sets just that label through ports.Writer's PatchMetadata,
// whose contract is a patch: labels and fields that someone else writes at
// the same time survive. A ReplicaSet that is gone is not an error.
package replicaset
