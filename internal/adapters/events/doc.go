// Package events records Kubernetes Events (events.k8s.io/v1) for the
// domain through ports.EventRecorder, with client-go's tools/events: an
// EventBroadcaster writing to the clientset's EventsV1, reporting
// controller "hexagonal-operator", instance "hexagonal-operator-<hostname>"
// (the Pod's name in a cluster). Repeats join a series, as client-go counts
// them; the recorder moves to a fresh broadcaster every [RotateEvery]
// Events, since each keeps what it wrote for minutes.
//
// Recording is best effort, as the port promises: a reconcile never waits
// for the API server. An Event waits in the recorder's queue of
// [QueueLength] until few writes are in flight, and only then goes to the
// broadcaster, which starts a goroutine for each; at most
// [MaxConcurrentWrites] Event writes reach the API server at once. Events
// dropped (recorded while the recorder is not running, about an object of
// a kind outside its scheme, of an unknown type, rejected by the API
// server, or with the queue full) are counted in
// operator_events_dropped_total{cause}. The scheme names the kinds of
// typed objects: client-go's plus [Options.AddToScheme], never a global one.
//
// Stop hands on what was recorded and waits, within its context, until
// those writes are done.
package events
