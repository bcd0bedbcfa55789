// Package events records Kubernetes Events (events.k8s.io/v1) for the
// domain through ports.EventRecorder, with client-go's tools/events: an
// EventBroadcaster writing to the clientset's EventsV1, reporting
// controller "hexagonal-operator", instance "hexagonal-operator-<hostname>"
// (the Pod's name in a cluster). Repeats join a series, as client-go counts
// them; the recorder moves to a fresh broadcaster every [RotateEvery]
// Events, since each keeps what it wrote for minutes.
//
// Recording is best effort, as the port promises: a reconcile never waits
// for the API server, and at most [MaxConcurrentWrites] Event writes reach
// it at once. Events dropped (recorded while the recorder is not
// running, about an object of a kind outside its scheme, of an unknown
// type, or rejected by the API server) are counted in
// operator_events_dropped_total{cause}. The scheme names the kinds of
// typed objects: client-go's plus [Options.AddToScheme], never a global one.
//
// Stop hands on what was recorded and waits, within its context, until
// those writes are done.
package events
