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
// Beyond the ports, each twin has plain methods for tests to arrange state
// and inspect results (Create, Update, Delete, Get, List), acting as "someone
// else" who writes to the cluster.
package memory
