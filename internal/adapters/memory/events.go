package memory

import (
	"fmt"
	"reflect"
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/hexagonal-operator/operator/internal/ports"
)

// Event is one recorded Event, with the note already formatted.
type Event struct {
	// Kind of the regarding object: from its TypeMeta, else its Go type's
	// name (typed objects usually carry no TypeMeta).
	Kind string
	// Regarding names the object the Event is about.
	Regarding types.NamespacedName
	Type      string
	Reason    string
	Action    string
	Note      string
}

// EventRecorder is a ports.EventRecorder that keeps Events in memory, in
// the order they were recorded. Unlike the real recorder it never drops or
// merges an Event, so tests can count them.
type EventRecorder struct {
	mu     sync.Mutex // guards events
	events []Event
}

var _ ports.EventRecorder = (*EventRecorder)(nil)

// NewEventRecorder returns a recorder with no Events.
func NewEventRecorder() *EventRecorder { return &EventRecorder{} }

// Eventf implements ports.EventRecorder.
func (r *EventRecorder) Eventf(regarding runtime.Object, eventType, reason, action, note string, args ...any) {
	e := Event{Type: eventType, Reason: reason, Action: action, Note: note}
	if len(args) > 0 {
		e.Note = fmt.Sprintf(note, args...)
	}
	if regarding != nil {
		e.Kind = regarding.GetObjectKind().GroupVersionKind().Kind
		if e.Kind == "" {
			e.Kind = reflect.Indirect(reflect.ValueOf(regarding)).Type().Name()
		}
		if m, err := meta.Accessor(regarding); err == nil {
			e.Regarding = types.NamespacedName{Namespace: m.GetNamespace(), Name: m.GetName()}
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

// Events returns a copy of the recorded Events, oldest first.
func (r *EventRecorder) Events() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events)
}

// EventsFor returns the Events regarding the object key, oldest first.
func (r *EventRecorder) EventsFor(key types.NamespacedName) []Event {
	return slices.DeleteFunc(r.Events(), func(e Event) bool { return e.Regarding != key })
}

// Reasons lists the reasons of the recorded Events, oldest first: the
// usual thing to assert.
func (r *EventRecorder) Reasons() []string {
	events := r.Events()
	out := make([]string, len(events))
	for i, e := range events {
		out[i] = e.Reason
	}
	return out
}
