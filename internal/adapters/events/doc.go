// Package events records Kubernetes Events (events.k8s.io/v1) for the
// domain through ports.EventRecorder, on kubeclient.Interface.
//
// # Why not client-go's tools/events
//
// Its broadcaster links client-go's clientset and global scheme, every
// built-in API group (see package kubeclient). It also writes each Event
// from a goroutine of its own, all at once (a backlog of 2000 reconciles
// fires 2000 Event POSTs alongside the 2000 label patches), hands Events
// over from goroutines Stop cannot wait for, and keeps a whole Event per
// object for 6 to 12 minutes. This package does the same job with the
// same wire behaviour, and none of that.
//
// # What an Event looks like
//
// As client-go writes it: named "<regarding name>.<UnixNano in hex>" (the
// nanoseconds made unique within the recorder; a random name when that
// one is not a valid name), in the regarding object's namespace (default
// for a cluster-scoped one), eventTime now, reportingController
// "hexagonal-operator" and reportingInstance "hexagonal-operator-<hostname>"
// (the Pod's name in a cluster). Recording is best effort, as the port
// promises: a reconcile never waits for the API server and never fails
// because of an Event.
//
// # Series
//
// An Event repeated (same regarding reference, type, reason, action and
// note) within 6 minutes of its last occurrence joins its series, as in
// client-go: the first repeat patches the Event to series {count: 2,
// lastObservedTime}; later ones are only counted, and their count is
// written when the series ends (6 minutes without a repeat), every 30
// minutes while it goes on, and on Stop. A hot loop costs the API server
// two writes, not one per repeat. Unlike client-go the note is part of
// what makes a repeat: an Event with another note is its own, so no note
// hides behind another's count. A series whose Event is gone (deleted, or
// expired by the API server's TTL) creates it again.
//
// # The cache, and how long it holds an entry
//
// Series need a cache of the Events seen. Its entries are small (the key
// fields, the name, times and counts, no Event object) and live only as
// long as a repeat could join their series: a sweeper evicts an entry
// 6 minutes after it was last seen, checking every 30 s, so no entry is
// older than 6½ minutes; a repeat that finds an entry past the window
// starts a new Event at once. The cache thus holds the distinct Events of
// the last few minutes, not of every object ever reported on, and at most
// 4096 of them, as client-go's correlator: past that, the entry seen
// longest ago is evicted early (its series finished), so a burst of
// distinct Events (a backlog of 100 000 objects) costs a bounded cache.
//
// # Writes
//
// Eventf queues a write. When the queue of 1000 is full it waits for room
// while the writers make progress (a write finished within the last 2 s),
// up to 10 s: a backlog of reconciles goes at the writers' pace instead of
// losing its Events, as client-go's broadcaster would. When the writers are
// stuck on the API server, or after 10 s, the Event is dropped with a debug
// line and counted in operator_events_dropped_total{cause}, as are Events
// the API server rejects or that keep failing.
// [Options.MaxConcurrentWrites] (4) writers drain the queue, so Events
// reach the API server a few at a time instead of competing all at once
// with the reconciles' own writes. An entry is with at most one writer at
// a time, which writes its latest count, so the writes of one Event never
// race each other. A failed write is tried 3 times in all, 0.5 s then 1 s
// apart (jittered), when the failure may pass (no connection, 429, 5xx,
// timeouts); client-go's 12 tries 10 s apart would hold a writer for two
// minutes. An Event the API server rejects (invalid, forbidden, already
// exists) is dropped with one log line.
//
// # Scheme
//
// An Event names the object it regards by kind. For typed objects (whose
// TypeMeta is usually empty) the kind comes from a scheme; the recorder
// builds its own from kubeclient's groups plus [Options.AddToScheme], never
// a global one.
//
// # Lifecycle
//
// Start begins recording; Stop writes what is queued and the counts of
// series not yet written, waits (within its context) until that is done,
// and stops. Events recorded outside that window are dropped.
package events
