// Package memory holds in-memory twins of the driven adapters: stores,
// sources, recorders and clocks that satisfy the same ports as the real
// adapters and pass the same contract suites (internal/ports/portstest), so
// domain tests run in microseconds without an API server and still mean
// something.
//
// # How the twins behave
//
//   - They are safe for concurrent use and hand out copies, never their own
//     objects, so a test cannot corrupt them by accident.
//   - Stores keep a resourceVersion per object that every change bumps, and
//     report missing objects, stale writes and name clashes with the port
//     errors (ports.ErrNotFound, ports.ErrConflict, ports.ErrAlreadyExists).
//   - Changes are delivered to a store's [Source] synchronously and in
//     order, before the write returns, so a test can assert right after
//     acting. Handlers must not write to the store from inside a
//     notification (the ports already ask handlers to only enqueue).
//
// # Helpers
//
// One generic [Store] stands in for the cache, the client and the informer
// of any kind (NewStore[*appsv1.ReplicaSet], NewStore[*corev1.Pod], …); its
// Metadata view serves a kind the operator reads metadata-only. Beyond the
// ports it has List, FailNextWrites (to test how callers handle write
// errors) and WithClock; its own Create, Update and PatchMetadata act as
// "someone else" writing to the cluster when a test arranges state.
package memory
