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

// clocked is what every ChaosPod rule holds: where "now" comes from.
type clocked struct{ clock ports.Clock }

// withClock builds one of the ChaosPod rules, all of which are clocked.
func withClock[R ~struct{ clocked }](clock ports.Clock) (*R, error) {
	if clock == nil {
		return nil, errors.New("chaospod admission rule: a clock is required")
	}
	return &R{clocked{clock: clock}}, nil
}

// ChaosPodV1Defaulter moves an unset or past spec.nextStop to now + 1
// minute.
type ChaosPodV1Defaulter struct{ clocked }

var _ ports.Defaulter[*chaosv1.ChaosPod] = (*ChaosPodV1Defaulter)(nil)

// NewChaosPodV1Defaulter returns the rule, reading "now" from clock.
func NewChaosPodV1Defaulter(clock ports.Clock) (*ChaosPodV1Defaulter, error) {
	return withClock[ChaosPodV1Defaulter](clock)
}

// Default moves the stop.
func (d *ChaosPodV1Defaulter) Default(_ context.Context, cp *chaosv1.ChaosPod) (ports.Warnings, error) {
	defaultStop(&cp.Spec.NextStop, d.clock.Now())
	return nil, nil
}

// ChaosPodV2Defaulter moves an unset or past spec.stop.at to now + 1
// minute and sets an unset spec.stop.interval to 10s.
type ChaosPodV2Defaulter struct{ clocked }

var _ ports.Defaulter[*chaosv2.ChaosPod] = (*ChaosPodV2Defaulter)(nil)

// NewChaosPodV2Defaulter returns the rule, reading "now" from clock.
func NewChaosPodV2Defaulter(clock ports.Clock) (*ChaosPodV2Defaulter, error) {
	return withClock[ChaosPodV2Defaulter](clock)
}

// Default moves the stop and sets the interval.
func (d *ChaosPodV2Defaulter) Default(_ context.Context, cp *chaosv2.ChaosPod) (ports.Warnings, error) {
	defaultStop(&cp.Spec.Stop.At, d.clock.Now())
	if cp.Spec.Stop.Interval == nil {
		cp.Spec.Stop.Interval = &metav1.Duration{Duration: defaultStopInterval}
	}
	return nil, nil
}

func defaultStop(stop **metav1.Time, now time.Time) {
	if *stop == nil || (*stop).Time.Before(now) {
		*stop = &metav1.Time{Time: now.Add(DefaultNextStopDelay)}
	}
}

// ChaosPodV1Validator checks spec.nextStop on create and update; see
// [validateStop].
type ChaosPodV1Validator struct{ clocked }

var _ ports.Validator[*chaosv1.ChaosPod] = (*ChaosPodV1Validator)(nil)

// NewChaosPodV1Validator returns the rule, reading "now" from clock.
func NewChaosPodV1Validator(clock ports.Clock) (*ChaosPodV1Validator, error) {
	return withClock[ChaosPodV1Validator](clock)
}

// ValidateCreate checks the stop.
func (v *ChaosPodV1Validator) ValidateCreate(_ context.Context, cp *chaosv1.ChaosPod) (ports.Warnings, error) {
	return nil, validateStop(".spec.nextStop", cp.Spec.NextStop, nil, v.clock.Now())
}

// ValidateUpdate checks the stop against the old one.
func (v *ChaosPodV1Validator) ValidateUpdate(_ context.Context, old, cp *chaosv1.ChaosPod) (ports.Warnings, error) {
	return nil, validateStop(".spec.nextStop", cp.Spec.NextStop, old.Spec.NextStop, v.clock.Now())
}

// ValidateDelete admits every deletion.
func (*ChaosPodV1Validator) ValidateDelete(context.Context, *chaosv1.ChaosPod) (ports.Warnings, error) {
	return nil, nil
}

// ChaosPodV2Validator checks spec.stop.at like v1's nextStop, and that
// spec.stop.interval, when set, lies within 1s..24h.
type ChaosPodV2Validator struct{ clocked }

var _ ports.Validator[*chaosv2.ChaosPod] = (*ChaosPodV2Validator)(nil)

// NewChaosPodV2Validator returns the rule, reading "now" from clock.
func NewChaosPodV2Validator(clock ports.Clock) (*ChaosPodV2Validator, error) {
	return withClock[ChaosPodV2Validator](clock)
}

// ValidateCreate checks the interval and the stop.
func (v *ChaosPodV2Validator) ValidateCreate(_ context.Context, cp *chaosv2.ChaosPod) (ports.Warnings, error) {
	return nil, v.validate(cp, nil)
}

// ValidateUpdate checks the interval, and the stop against the old one.
func (v *ChaosPodV2Validator) ValidateUpdate(_ context.Context, old, cp *chaosv2.ChaosPod) (ports.Warnings, error) {
	return nil, v.validate(cp, old.Spec.Stop.At)
}

func (v *ChaosPodV2Validator) validate(cp *chaosv2.ChaosPod, oldStop *metav1.Time) error {
	if iv := cp.Spec.Stop.Interval; iv != nil && (iv.Duration < minStopInterval || iv.Duration > maxStopInterval) {
		return ports.Denied(fmt.Sprintf(".spec.stop.interval must be between %s and %s, got %s",
			chaosv2.MinStopInterval, chaosv2.MaxStopInterval, iv.Duration))
	}
	return validateStop(".spec.stop.at", cp.Spec.Stop.At, oldStop, v.clock.Now())
}

// ValidateDelete admits every deletion.
func (*ChaosPodV2Validator) ValidateDelete(context.Context, *chaosv2.ChaosPod) (ports.Warnings, error) {
	return nil, nil
}

// validateStop: a set stop must be later than now; it may not move more
// than an hour past an old stop (an update's) that is still ahead. An old
// stop that has passed starts a new run (the reconciler sets now +
// interval, and an interval may be up to 24h), which is not a delay.
func validateStop(path string, stop, old *metav1.Time, now time.Time) error {
	switch {
	case stop == nil:
		return nil
	case !stop.Time.After(now):
		return ports.Denied(path + " must be later than current time")
	case old != nil && old.Time.After(now) && stop.Time.After(old.Time.Add(MaxNextStopDelay)):
		return ports.Denied("it is not allowed to delay " + path + " for more than 1 hour")
	}
	return nil
}
