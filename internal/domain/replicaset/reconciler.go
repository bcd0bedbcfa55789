package replicaset

import (
	"context"
	"errors"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hexagonal-operator/operator/internal/ports"
)

// The label every ReplicaSet must carry.
const (
	LabelKey   = "hello"
	LabelValue = "world"
)

// ReasonLabeled is the reason of the Event recorded when a ReplicaSet gets
// its label.
const ReasonLabeled = "Labeled"

// NeedsLabel reports whether a ReplicaSet with these labels needs a write.
// Event filters use it to skip reconciles that would do nothing.
func NeedsLabel(labels map[string]string) bool {
	return labels[LabelKey] != LabelValue
}

// Reconciler labels ReplicaSets. Build it with New.
//
// It reads a ReplicaSet's metadata only: its labels are all it decides on,
// so the cache behind the reader need not hold ReplicaSets' specs (the
// Pod template is most of a ReplicaSet's memory). A reconciler that needs
// the spec reads through a ports.Reader[*appsv1.ReplicaSet] instead.
type Reconciler struct {
	replicaSets ports.Reader[*metav1.PartialObjectMetadata]
	writer      ports.Writer[*appsv1.ReplicaSet]
	events      ports.EventRecorder
}

var _ ports.Reconciler = (*Reconciler)(nil)

// New returns a Reconciler reading ReplicaSets' metadata through
// replicaSets, writing through writer and recording Events through events.
func New(replicaSets ports.Reader[*metav1.PartialObjectMetadata], writer ports.Writer[*appsv1.ReplicaSet], events ports.EventRecorder) (*Reconciler, error) {
	if replicaSets == nil || writer == nil || events == nil {
		return nil, errors.New("replicaset reconciler: reader, writer and event recorder are required")
	}
	return &Reconciler{replicaSets: replicaSets, writer: writer, events: events}, nil
}

// Reconcile makes sure the ReplicaSet named by req carries hello=world.
func (r *Reconciler) Reconcile(ctx context.Context, req ports.Request) (ports.Result, error) {
	rs, err := r.replicaSets.Get(ctx, req.NamespacedName)
	if errors.Is(err, ports.ErrNotFound) {
		return ports.Result{}, nil
	}
	if err != nil {
		return ports.Result{}, fmt.Errorf("get replicaset %s: %w", req.NamespacedName, err)
	}
	if !NeedsLabel(rs.Labels) {
		return ports.Result{}, nil
	}
	err = r.writer.PatchMetadata(ctx, req.NamespacedName, ports.MetadataPatch{Labels: map[string]string{LabelKey: LabelValue}})
	switch {
	case errors.Is(err, ports.ErrNotFound):
		return ports.Result{}, nil // deleted since we read it
	case errors.Is(err, ports.ErrInvalid):
		return ports.Result{}, ports.Terminal(fmt.Errorf("label replicaset %s: %w", req.NamespacedName, err))
	case err != nil:
		return ports.Result{}, fmt.Errorf("label replicaset %s: %w", req.NamespacedName, err)
	}
	r.events.Eventf(rs, ports.EventTypeNormal, ReasonLabeled, "Label", "Set label %s=%s", LabelKey, LabelValue)
	return ports.Result{}, nil
}
