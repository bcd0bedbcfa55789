// Package events records Kubernetes Events (events.k8s.io/v1) for the
// domain through ports.EventRecorder, with client-go's tools/events: an
// EventBroadcaster writing to the clientset's EventsV1, and its recorder
// named after the operator.
//
// # What an Event looks like
//
// As client-go writes it: named "<regarding name>.<UnixNano in hex>", in
// the regarding object's namespace (default for a cluster-scoped one),
// reportingController "hexagonal-operator" and reportingInstance
// "hexagonal-operator-<hostname>" (the Pod's name in a cluster). A repeat
// (same object version, type, reason and action) joins the first Event's
// series, as client-go counts them. Notes are cut to the API server's
// 1024 bytes, and an empty action takes the reason.
//
// # Drops
//
// Recording is best effort, as the port promises: a reconcile never waits
// for the API server. Events recorded while the recorder is not running,
// about an object outside its scheme or of an unknown type, and those the
// API server rejects are counted in operator_events_dropped_total{cause}.
//
// # Scheme
//
// An Event names the object it regards by kind. For typed objects (whose
// TypeMeta is usually empty) the kind comes from the recorder's own scheme:
// client-go's built-in kinds plus [Options.AddToScheme], never a global
// one.
//
// # Lifecycle
//
// Start starts the broadcaster; Stop shuts it down, which hands on what
// was recorded, and waits (within its context) until those writes are done.
package events
