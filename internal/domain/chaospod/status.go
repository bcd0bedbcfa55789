package chaospod

import (
	"context"
	"errors"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	chaosv1 "github.com/hexagonal-operator/operator/api/chaos/v1"
	"github.com/hexagonal-operator/operator/internal/ports"
)

// maxConditionMessage is the CRD schema's limit on a condition's message
// (metav1.Condition's); the API server's words are cut to fit it.
const maxConditionMessage = 32768

// ready is the Ready condition a ChaosPod should show, without its
// transition time (setReady keeps or stamps that).
func ready(cp *chaosv1.ChaosPod, status metav1.ConditionStatus, reason, message string) metav1.Condition {
	if len(message) > maxConditionMessage {
		message = message[:maxConditionMessage]
	}
	return metav1.Condition{
		Type:               chaosv1.ConditionReady,
		Status:             status,
		ObservedGeneration: cp.Generation,
		Reason:             reason,
		Message:            message,
	}
}

// running is Ready=True for a Pod that runs and is ready, stopped at
// stop.
func running(cp *chaosv1.ChaosPod, stop time.Time) metav1.Condition {
	return ready(cp, metav1.ConditionTrue, chaosv1.ReasonPodRunning,
		fmt.Sprintf("Pod %s runs until %s", cp.Name, stop.UTC().Format(time.RFC3339)))
}

// withReady reports whether conds already say c, and returns them with c
// in place of the Ready condition they hold. lastTransitionTime changes
// only when the status does, as metav1.Condition defines it.
func withReady(conds []metav1.Condition, c metav1.Condition, now time.Time) ([]metav1.Condition, bool) {
	c.LastTransitionTime = metav1.NewTime(now.Truncate(time.Second))
	for i, old := range conds {
		if old.Type != c.Type {
			continue
		}
		if old.Status == c.Status {
			c.LastTransitionTime = old.LastTransitionTime
		}
		if sameCondition(old, c) {
			return conds, true
		}
		out := append([]metav1.Condition(nil), conds...)
		out[i] = c
		return out, false
	}
	return append(append([]metav1.Condition(nil), conds...), c), false
}

// setReady writes c as cp's Ready condition through the status
// subresource, unless cp already says so: it is level-based, so repeating
// a reconcile writes nothing.
func (r *Reconciler) setReady(ctx context.Context, cp *chaosv1.ChaosPod, c metav1.Condition) error {
	conds, same := withReady(cp.Status.Conditions, c, r.clock.Now())
	if same {
		return nil
	}
	next := cp.DeepCopy()
	next.Status.Conditions = conds
	if _, err := r.chaosW.UpdateStatus(ctx, next); err != nil {
		return r.writeErr(cp, "set Ready condition of chaospod", err)
	}
	return nil
}

// writeErr wraps the error of a write to cp. A ChaosPod gone meanwhile is
// nothing to do; a write the API server refuses as invalid cannot succeed
// on retry, so it is terminal and a Warning Event says why.
func (r *Reconciler) writeErr(cp *chaosv1.ChaosPod, what string, err error) error {
	key := types.NamespacedName{Namespace: cp.Namespace, Name: cp.Name}
	switch {
	case errors.Is(err, ports.ErrNotFound):
		return nil
	case errors.Is(err, ports.ErrInvalid):
		r.events.Eventf(cp, ports.EventTypeWarning, ReasonUpdateFailed, "Update", "Cannot %s: %s", what, ports.Cause(err))
		return ports.Terminal(fmt.Errorf("%s %s: %w", what, key, err))
	}
	return fmt.Errorf("%s %s: %w", what, key, err)
}

// sameCondition compares times by instant: one read back from the API
// server has lost its location.
func sameCondition(a, b metav1.Condition) bool {
	return a.Type == b.Type && a.Status == b.Status && a.ObservedGeneration == b.ObservedGeneration &&
		a.Reason == b.Reason && a.Message == b.Message && a.LastTransitionTime.Equal(&b.LastTransitionTime)
}

// createRefused reports a Pod create the API server refused: a Warning
// Event and Ready=False, both with the API server's reason. Every refusal
// is retried with back-off, as controller-runtime retries any error: an
// admission policy refuses as invalid too, and also while the API server
// has not yet resolved its parameter kind (after install or a restart), so
// the same Pod can be admitted later.
func (r *Reconciler) createRefused(ctx context.Context, cp *chaosv1.ChaosPod, err error) error {
	cause := ports.Cause(err)
	r.events.Eventf(cp, ports.EventTypeWarning, ReasonPodCreateFailed, "Create", "Cannot create pod %s: %s", cp.Name, cause)
	if serr := r.setReady(ctx, cp, ready(cp, metav1.ConditionFalse, chaosv1.ReasonPodCreateFailed,
		fmt.Sprintf("Cannot create pod %s: %s", cp.Name, cause))); serr != nil {
		return serr
	}
	return fmt.Errorf("create pod %s/%s: %w", cp.Namespace, cp.Name, err)
}
