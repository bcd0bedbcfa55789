package greeting

import (
	"context"
	"errors"
	"fmt"

	greetingv1 "github.com/hexagonal-operator/operator/examples/greeting/api/v1"
	"github.com/hexagonal-operator/operator/internal/ports"
)

// ReasonGreeted is the reason of the Event recorded when a Greeting's
// status gets a new message.
const ReasonGreeted = "Greeted"

// Message is the greeting a spec asks for: "<salutation>, <name>!", with
// [DefaultSalutation] for an empty salutation (a Greeting that came in
// without the defaulting webhook is greeted as if it had).
func Message(spec greetingv1.GreetingSpec) string {
	salutation := spec.Salutation
	if salutation == "" {
		salutation = DefaultSalutation
	}
	return salutation + ", " + spec.Name + "!"
}

// Reconciler writes each Greeting's message into its status. Build it with
// NewReconciler.
type Reconciler struct {
	greetings ports.Reader[*greetingv1.Greeting]
	writer    ports.Writer[*greetingv1.Greeting]
	events    ports.EventRecorder
}

var _ ports.Reconciler = (*Reconciler)(nil)

// NewReconciler returns a Reconciler reading Greetings through greetings,
// writing their status through writer and recording Events through events.
func NewReconciler(greetings ports.Reader[*greetingv1.Greeting], writer ports.Writer[*greetingv1.Greeting], events ports.EventRecorder) (*Reconciler, error) {
	if greetings == nil || writer == nil || events == nil {
		return nil, errors.New("greeting reconciler: reader, writer and event recorder are required")
	}
	return &Reconciler{greetings: greetings, writer: writer, events: events}, nil
}

// Reconcile makes the status of the Greeting named by req greet as its
// current spec asks.
func (r *Reconciler) Reconcile(ctx context.Context, req ports.Request) (ports.Result, error) {
	g, err := r.greetings.Get(ctx, req.NamespacedName)
	if errors.Is(err, ports.ErrNotFound) {
		return ports.Result{}, nil
	}
	if err != nil {
		return ports.Result{}, fmt.Errorf("get greeting %s: %w", req.NamespacedName, err)
	}
	message := Message(g.Spec)
	if g.Status.Message == message && g.Status.ObservedGeneration == g.Generation {
		return ports.Result{}, nil
	}
	// The reader may hand out the cache's own object: change a copy.
	next := g.DeepCopy()
	next.Status.Message = message
	next.Status.ObservedGeneration = g.Generation
	_, err = r.writer.UpdateStatus(ctx, next)
	switch {
	case errors.Is(err, ports.ErrNotFound):
		return ports.Result{}, nil // deleted since we read it
	case errors.Is(err, ports.ErrInvalid):
		return ports.Result{}, ports.Terminal(fmt.Errorf("greet %s: %w", req.NamespacedName, err))
	case err != nil:
		// A conflict too: the Greeting changed since the cache saw it, and
		// the retry reads the newer one.
		return ports.Result{}, fmt.Errorf("greet %s: %w", req.NamespacedName, err)
	}
	r.events.Eventf(next, ports.EventTypeNormal, ReasonGreeted, "Greet", "Set status.message to %q", message)
	return ports.Result{}, nil
}
