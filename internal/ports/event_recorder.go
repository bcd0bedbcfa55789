package ports

import "k8s.io/apimachinery/pkg/runtime"

// Event types, as Kubernetes spells them.
const (
	EventTypeNormal  = "Normal"
	EventTypeWarning = "Warning"
)

// EventRecorder knows how to record a Kubernetes Event about an object.
//
// Recording is best effort and never fails the caller: losing an Event
// must not fail a reconcile. It does not wait for the API server.
type EventRecorder interface {
	// Eventf records an event regarding obj. action says what the operator
	// did (for example "Label"), note is a human-readable message.
	Eventf(regarding runtime.Object, eventType, reason, action, note string, args ...any)
}
