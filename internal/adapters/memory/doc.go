// Package memory holds in-memory twins of the driven adapters (a [Store]
// per kind standing in for the cache, the client and the informer at once,
// an Event recorder, a clock, a leader elector) that satisfy the same ports
// and pass the same contract suite (test/portstest), so domain
// tests run in microseconds without an API server and still mean something.
//
// The twins are safe for concurrent use and hand out copies. A store
// delivers every change to its [Source] synchronously, before the write
// returns, so a test can assert right after acting; handlers must not write
// to the store from inside a notification. Beyond the ports a store has
// All, FailNextWrites and WithClock, and a Metadata view for a kind read
// metadata-only.
package memory
