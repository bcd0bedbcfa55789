package admission

import (
	"context"
	"errors"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	chaosv1 "github.com/hexagonal-operator/operator/api/chaos/v1"
	chaosv2 "github.com/hexagonal-operator/operator/api/chaos/v2"
	"github.com/hexagonal-operator/operator/internal/ports"
)

// ChaosPod admission constants.
const (
	// DefaultNextStopDelay is how far ahead an unset or past nextStop is
	// moved by the defaulter.
	DefaultNextStopDelay = time.Minute
	// MaxNextStopDelay is how far an update may move nextStop past its old
	// value.
	MaxNextStopDelay = time.Hour
)

// v2's spec.stop.interval: its bounds and default, as the API package
// states them for the CRD and its messages.
var (
	minStopInterval     = mustParseDuration(chaosv2.MinStopInterval)
	maxStopInterval     = mustParseDuration(chaosv2.MaxStopInterval)
	defaultStopInterval = mustParseDuration(chaosv2.DefaultStopInterval)
)

// mustParseDuration parses one of the API package's constant durations;
// the package's tests run it on each, so it cannot panic in a build that
// passed them.
func mustParseDuration(s string) time.Duration {
	d, err := time.ParseDuration(s)
	if err != nil {
		panic(fmt.Sprintf("chaos API duration %q: %v", s, err))
	}
	return d
}

// ChaosPodDefaulter is the mutating rule for ChaosPods, in both versions.
type ChaosPodDefaulter struct{ clock ports.Clock }

// NewChaosPodDefaulter returns the defaulter, reading "now" from clock.
func NewChaosPodDefaulter(clock ports.Clock) (*ChaosPodDefaulter, error) {
	if clock == nil {
		return nil, errors.New("chaospod defaulter: a clock is required")
	}
	return &ChaosPodDefaulter{clock: clock}, nil
}

// DefaultV1 moves an unset or past spec.nextStop to now + 1 minute.
func (d *ChaosPodDefaulter) DefaultV1(_ context.Context, req ports.AdmissionRequest[chaosv1.ChaosPod]) (ports.Mutation[chaosv1.ChaosPod], error) {
	if !createOrUpdate(req.Operation) {
		return ports.Mutation[chaosv1.ChaosPod]{Verdict: ports.Allow()}, nil
	}
	if req.Object == nil {
		return ports.Mutation[chaosv1.ChaosPod]{}, fmt.Errorf("default chaospod: %s %w", req.Operation, errNoObject)
	}
	now := d.clock.Now()
	if !needsStopDefault(req.Object.Spec.NextStop, now) {
		return ports.Mutation[chaosv1.ChaosPod]{Verdict: ports.Allow()}, nil
	}
	obj := req.Object.DeepCopy()
	obj.Spec.NextStop = &metav1.Time{Time: now.Add(DefaultNextStopDelay)}
	return ports.Mutation[chaosv1.ChaosPod]{Verdict: ports.Allow(), Object: obj}, nil
}

// DefaultV2 moves an unset or past spec.stop.at to now + 1 minute
// and sets an unset spec.stop.interval to 10s.
func (d *ChaosPodDefaulter) DefaultV2(_ context.Context, req ports.AdmissionRequest[chaosv2.ChaosPod]) (ports.Mutation[chaosv2.ChaosPod], error) {
	if !createOrUpdate(req.Operation) {
		return ports.Mutation[chaosv2.ChaosPod]{Verdict: ports.Allow()}, nil
	}
	if req.Object == nil {
		return ports.Mutation[chaosv2.ChaosPod]{}, fmt.Errorf("default chaospod: %s %w", req.Operation, errNoObject)
	}
	now := d.clock.Now()
	stopNeeded := needsStopDefault(req.Object.Spec.Stop.At, now)
	intervalNeeded := req.Object.Spec.Stop.Interval == nil
	if !stopNeeded && !intervalNeeded {
		return ports.Mutation[chaosv2.ChaosPod]{Verdict: ports.Allow()}, nil
	}
	obj := req.Object.DeepCopy()
	if stopNeeded {
		obj.Spec.Stop.At = &metav1.Time{Time: now.Add(DefaultNextStopDelay)}
	}
	if intervalNeeded {
		obj.Spec.Stop.Interval = &metav1.Duration{Duration: defaultStopInterval}
	}
	return ports.Mutation[chaosv2.ChaosPod]{Verdict: ports.Allow(), Object: obj}, nil
}

func needsStopDefault(stop *metav1.Time, now time.Time) bool {
	return stop == nil || stop.Time.Before(now)
}

// ChaosPodValidator is the validating rule for ChaosPods, in both versions.
type ChaosPodValidator struct{ clock ports.Clock }

// NewChaosPodValidator returns the validator, reading "now" from clock.
func NewChaosPodValidator(clock ports.Clock) (*ChaosPodValidator, error) {
	if clock == nil {
		return nil, errors.New("chaospod validator: a clock is required")
	}
	return &ChaosPodValidator{clock: clock}, nil
}

// ValidateV1 checks spec.nextStop; see [validateStop].
func (v *ChaosPodValidator) ValidateV1(_ context.Context, req ports.AdmissionRequest[chaosv1.ChaosPod]) (ports.Verdict, error) {
	if !createOrUpdate(req.Operation) {
		return ports.Allow(), nil
	}
	if req.Object == nil {
		return ports.Verdict{}, fmt.Errorf("validate chaospod: %s %w", req.Operation, errNoObject)
	}
	var old *metav1.Time
	if req.OldObject != nil {
		old = req.OldObject.Spec.NextStop
	}
	return validateStop(".spec.nextStop", req.Operation, req.Object.Spec.NextStop, old, v.clock.Now()), nil
}

// ValidateV2 checks spec.stop.at like v1's nextStop, and that
// spec.stop.interval, when set, lies within 1s..24h.
func (v *ChaosPodValidator) ValidateV2(_ context.Context, req ports.AdmissionRequest[chaosv2.ChaosPod]) (ports.Verdict, error) {
	if !createOrUpdate(req.Operation) {
		return ports.Allow(), nil
	}
	if req.Object == nil {
		return ports.Verdict{}, fmt.Errorf("validate chaospod: %s %w", req.Operation, errNoObject)
	}
	if iv := req.Object.Spec.Stop.Interval; iv != nil && (iv.Duration < minStopInterval || iv.Duration > maxStopInterval) {
		return ports.Deny(fmt.Sprintf(".spec.stop.interval must be between %s and %s, got %s",
			chaosv2.MinStopInterval, chaosv2.MaxStopInterval, iv.Duration)), nil
	}
	var old *metav1.Time
	if req.OldObject != nil {
		old = req.OldObject.Spec.Stop.At
	}
	return validateStop(".spec.stop.at", req.Operation, req.Object.Spec.Stop.At, old, v.clock.Now()), nil
}

// validateStop: a set stop must be later than now; on UPDATE it may not move
// more than an hour past an old stop that is still ahead. An old stop that
// has passed starts a new run (the reconciler sets now + interval, and an
// interval may be up to 24h), which is not a delay.
func validateStop(path string, op ports.Operation, stop, old *metav1.Time, now time.Time) ports.Verdict {
	if stop == nil {
		return ports.Allow()
	}
	if !stop.Time.After(now) {
		return ports.Deny(path + " must be later than current time")
	}
	if op == ports.OperationUpdate && old != nil && old.Time.After(now) &&
		stop.Time.After(old.Time.Add(MaxNextStopDelay)) {
		return ports.Deny("it is not allowed to delay " + path + " for more than 1 hour")
	}
	return ports.Allow()
}
