package greeting

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	greetingv1 "github.com/hexagonal-operator/operator/examples/greeting/api/v1"
	"github.com/hexagonal-operator/operator/internal/ports"
)

// ReasonGreeted is the reason of the Event recorded when a Greeting's
// status gets a new message.
const ReasonGreeted = "Greeted"

// MessageKey is the data key of a Greeting's ConfigMap that holds its
// message.
const MessageKey = "message"

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

// Reconciler writes each Greeting's message into its status and into the
// ConfigMap it owns. Build it with NewReconciler.
type Reconciler struct {
	greetings        ports.Reader[*greetingv1.Greeting]
	writer           ports.Writer[*greetingv1.Greeting]
	configMaps       ports.Reader[*corev1.ConfigMap]
	configMapsWriter ports.Writer[*corev1.ConfigMap]
	events           ports.EventRecorder
}

var _ ports.Reconciler = (*Reconciler)(nil)

// NewReconciler returns a Reconciler reading Greetings through greetings
// and their ConfigMaps through configMaps, writing each kind through its
// writer and recording Events through events.
func NewReconciler(
	greetings ports.Reader[*greetingv1.Greeting], writer ports.Writer[*greetingv1.Greeting],
	configMaps ports.Reader[*corev1.ConfigMap], configMapsWriter ports.Writer[*corev1.ConfigMap],
	events ports.EventRecorder,
) (*Reconciler, error) {
	if greetings == nil || writer == nil || configMaps == nil || configMapsWriter == nil || events == nil {
		return nil, errors.New("greeting reconciler: readers, writers and event recorder are required")
	}
	return &Reconciler{greetings: greetings, writer: writer, configMaps: configMaps, configMapsWriter: configMapsWriter, events: events}, nil
}

// Reconcile makes the ConfigMap and the status of the Greeting named by
// req greet as its current spec asks.
func (r *Reconciler) Reconcile(ctx context.Context, req ports.Request) (ports.Result, error) {
	g, err := r.greetings.Get(ctx, req.NamespacedName)
	if errors.Is(err, ports.ErrNotFound) {
		return ports.Result{}, nil // its ConfigMap goes with it: the owner reference says so
	}
	if err != nil {
		return ports.Result{}, fmt.Errorf("get greeting %s: %w", req.NamespacedName, err)
	}
	message := Message(g.Spec)
	if err := r.publish(ctx, g, message); err != nil {
		return ports.Result{}, err
	}
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

// publish makes the ConfigMap named like g hold message under [MessageKey],
// creating it with g as its controller. It leaves alone a ConfigMap that
// g does not control, and refuses to go on.
func (r *Reconciler) publish(ctx context.Context, g *greetingv1.Greeting, message string) error {
	key := types.NamespacedName{Namespace: g.Namespace, Name: g.Name}
	cm, err := r.configMaps.Get(ctx, key)
	switch {
	case errors.Is(err, ports.ErrNotFound):
		_, err = r.configMapsWriter.Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{
				Namespace:       key.Namespace,
				Name:            key.Name,
				OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(g, greetingv1.SchemeGroupVersion.WithKind(greetingv1.Kind))},
			},
			Data: map[string]string{MessageKey: message},
		})
	case err != nil:
		return fmt.Errorf("get configmap %s: %w", key, err)
	case !metav1.IsControlledBy(cm, g):
		return ports.Terminal(fmt.Errorf("publish greeting %s: configmap %s exists and is not controlled by it", key, key))
	case cm.Data[MessageKey] == message:
		return nil
	default:
		// A copy, as for the status; the other keys stay.
		next := cm.DeepCopy()
		if next.Data == nil {
			next.Data = map[string]string{}
		}
		next.Data[MessageKey] = message
		_, err = r.configMapsWriter.Update(ctx, next)
	}
	switch {
	case errors.Is(err, ports.ErrInvalid):
		return ports.Terminal(fmt.Errorf("publish greeting %s: %w", key, err))
	case err != nil:
		// ErrAlreadyExists and ErrConflict too: the cache is behind what
		// the API server stores, and the retry reads what it caught up to.
		return fmt.Errorf("publish greeting %s: %w", key, err)
	}
	return nil
}
