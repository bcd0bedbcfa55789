// Package events records Kubernetes Events (events.k8s.io/v1) for the
// domain through ports.EventRecorder, with client-go's tools/events
// broadcaster.
//
// # Why the broadcaster
//
// The broadcaster queues Events and writes them in the background, merges
// repeats of the same Event into one object with a series count (so a hot
// loop cannot flood etcd), and retries when the API server is briefly away.
// A reconcile never waits for an Event and never fails because of one:
// recording is best effort, as the port promises.
//
// # What we add to it
//
// client-go's broadcaster writes each Event from a goroutine of its own, all
// at once: a backlog of 2000 reconciles fires 2000 Event POSTs alongside
// the 2000 label patches, and they share the API server. A bounded sink
// lets [Options.MaxConcurrentWrites] (4) through at a time; the rest wait
// in memory, none is dropped (make bench: rs-backlog and rs-burst converge
// 13 % sooner). Its recorder also hands each Event to the queue from a
// goroutine, which Stop cannot wait for; ours builds the Event the same way
// and queues it before Eventf returns, so that Stop, which waits for the
// sink to drain, writes every Event recorded before it.
//
// # Scheme
//
// An Event names the object it regards by kind. For typed objects (whose
// TypeMeta is usually empty) the kind comes from a scheme; the recorder
// builds its own from client-go's built-in types plus
// [Options.AddToScheme], never the global scheme.Scheme.
//
// # Lifecycle
//
// Start begins recording; Stop flushes the queue to the sink, waits (within
// its context) until the sink has written it, and stops.
// Events recorded outside that window are dropped. The reporting controller
// is "hexagonal-operator" and the reporting instance
// "hexagonal-operator-<hostname>" (the Pod's name in a cluster).
package events
