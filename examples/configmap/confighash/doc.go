// Package confighash is the domain of the example's third controller: every
// ConfigMap carries, in the annotation [Annotation], the hex SHA-256 of its
// data and binaryData, so that whoever mounts it can tell from the
// annotation alone whether its content changed (a Deployment template can
// copy it to roll its Pods, for instance).
//
// The reconciler is level-based, like the operator's own. It reads the
// ConfigMap (from the cache, through ports.Reader), writes nothing
// when the annotation already holds the hash, and otherwise sets just that
// annotation through ports.Writer's PatchMetadata, whose contract is a patch:
// annotations and data that someone else writes at the same time survive.
// A ConfigMap that is gone is not an error.
//
// Like internal/domain, the package imports only internal/ports, the
// Kubernetes API types and the standard library: it knows nothing of
// client-go, informers, fx or the process that runs it.
package confighash
