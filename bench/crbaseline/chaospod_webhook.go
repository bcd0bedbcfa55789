package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	chaosv1 "github.com/hexagonal-operator/operator/bench/crbaseline/api/v1"
	chaosv2 "github.com/hexagonal-operator/operator/bench/crbaseline/api/v2"
)

const (
	// defaultNextStopDelay is how far ahead an unset or past stop moves.
	defaultNextStopDelay = time.Minute
	// maxNextStopDelay is how far an update may move a stop that is still
	// ahead past its old value.
	maxNextStopDelay = time.Hour
	// v2's spec.stop.interval: its bounds and its default.
	minStopInterval     = time.Second
	maxStopInterval     = 24 * time.Hour
	defaultStopInterval = 10 * time.Second
)

// setupChaosPodWebhooks serves the defaulting and validating webhooks of
// both versions. v1 is the Hub and v2 Convertible, so the builder also
// serves /convert.
func setupChaosPodWebhooks(mgr ctrl.Manager) error {
	if err := ctrl.NewWebhookManagedBy(mgr, &chaosv1.ChaosPod{}).
		WithDefaulter(&chaosPodV1Defaulter{}).
		WithValidator(&chaosPodV1Validator{}).
		Complete(); err != nil {
		return fmt.Errorf("chaospod v1 webhooks: %w", err)
	}
	if err := ctrl.NewWebhookManagedBy(mgr, &chaosv2.ChaosPod{}).
		WithDefaulter(&chaosPodV2Defaulter{}).
		WithValidator(&chaosPodV2Validator{}).
		Complete(); err != nil {
		return fmt.Errorf("chaospod v2 webhooks: %w", err)
	}
	return nil
}

func needsStopDefault(stop *metav1.Time, now time.Time) bool {
	return stop == nil || stop.Time.Before(now)
}

type chaosPodV1Defaulter struct{}

// Default moves an unset or past spec.nextStop to now + 1 minute.
func (*chaosPodV1Defaulter) Default(_ context.Context, cp *chaosv1.ChaosPod) error {
	if now := time.Now(); needsStopDefault(cp.Spec.NextStop, now) {
		cp.Spec.NextStop = &metav1.Time{Time: now.Add(defaultNextStopDelay)}
	}
	return nil
}

type chaosPodV2Defaulter struct{}

// Default moves an unset or past spec.stop.at to now + 1 minute and sets an
// unset spec.stop.interval to 10s.
func (*chaosPodV2Defaulter) Default(_ context.Context, cp *chaosv2.ChaosPod) error {
	if now := time.Now(); needsStopDefault(cp.Spec.Stop.At, now) {
		cp.Spec.Stop.At = &metav1.Time{Time: now.Add(defaultNextStopDelay)}
	}
	if cp.Spec.Stop.Interval == nil {
		cp.Spec.Stop.Interval = &metav1.Duration{Duration: defaultStopInterval}
	}
	return nil
}

// validateStop: a set stop must be later than now; an update may not move
// it more than an hour past an old stop that is still ahead (an old stop
// that has passed starts a new run, which is no delay).
func validateStop(path string, stop, old *metav1.Time) error {
	if stop == nil {
		return nil
	}
	now := time.Now()
	if !stop.After(now) {
		return errors.New(path + " must be later than current time")
	}
	if old != nil && old.After(now) && stop.After(old.Add(maxNextStopDelay)) {
		return errors.New("it is not allowed to delay " + path + " for more than 1 hour")
	}
	return nil
}

type chaosPodV1Validator struct{}

func (*chaosPodV1Validator) ValidateCreate(_ context.Context, cp *chaosv1.ChaosPod) (admission.Warnings, error) {
	return nil, validateStop(".spec.nextStop", cp.Spec.NextStop, nil)
}

func (*chaosPodV1Validator) ValidateUpdate(_ context.Context, old, cp *chaosv1.ChaosPod) (admission.Warnings, error) {
	return nil, validateStop(".spec.nextStop", cp.Spec.NextStop, old.Spec.NextStop)
}

func (*chaosPodV1Validator) ValidateDelete(context.Context, *chaosv1.ChaosPod) (admission.Warnings, error) {
	return nil, nil
}

type chaosPodV2Validator struct{}

func validateInterval(cp *chaosv2.ChaosPod) error {
	if iv := cp.Spec.Stop.Interval; iv != nil && (iv.Duration < minStopInterval || iv.Duration > maxStopInterval) {
		return fmt.Errorf(".spec.stop.interval must be between %s and %s, got %s",
			chaosv2.MinStopInterval, chaosv2.MaxStopInterval, iv.Duration)
	}
	return nil
}

func (*chaosPodV2Validator) ValidateCreate(_ context.Context, cp *chaosv2.ChaosPod) (admission.Warnings, error) {
	if err := validateInterval(cp); err != nil {
		return nil, err
	}
	return nil, validateStop(".spec.stop.at", cp.Spec.Stop.At, nil)
}

func (*chaosPodV2Validator) ValidateUpdate(_ context.Context, old, cp *chaosv2.ChaosPod) (admission.Warnings, error) {
	if err := validateInterval(cp); err != nil {
		return nil, err
	}
	return nil, validateStop(".spec.stop.at", cp.Spec.Stop.At, old.Spec.Stop.At)
}

func (*chaosPodV2Validator) ValidateDelete(context.Context, *chaosv2.ChaosPod) (admission.Warnings, error) {
	return nil, nil
}
