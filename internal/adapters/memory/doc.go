// Package memory holds in-memory twins of the driven adapters: a [Store]
// per kind standing in for the cache and the client at once, an
// [EventRecorder] and a [Clock]. They satisfy the same ports and pass the
// same contract suite (test/portstest), so domain tests run in
// microseconds without an API server and still mean something.
//
// The twins are safe for concurrent use and hand out copies. Beyond the
// ports a store has All, FailNextWrites and WithClock, and a Metadata view
// for a kind read metadata-only.
package memory
