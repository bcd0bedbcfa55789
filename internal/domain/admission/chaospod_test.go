package admission_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	chaosv1 "github.com/hexagonal-operator/operator/api/chaos/v1"
	chaosv2 "github.com/hexagonal-operator/operator/api/chaos/v2"
	"github.com/hexagonal-operator/operator/internal/adapters/memory"
	"github.com/hexagonal-operator/operator/internal/domain/admission"
	"github.com/hexagonal-operator/operator/internal/ports"
)

var now = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

func at(d time.Duration) *metav1.Time { return &metav1.Time{Time: now.Add(d)} }

func v1Pod(stop *metav1.Time) *chaosv1.ChaosPod {
	return &chaosv1.ChaosPod{Spec: chaosv1.ChaosPodSpec{NextStop: stop}}
}

func v2Pod(stop *metav1.Time, interval time.Duration) *chaosv2.ChaosPod {
	cp := &chaosv2.ChaosPod{Spec: chaosv2.ChaosPodSpec{Stop: chaosv2.ChaosPodStop{At: stop}}}
	if interval != 0 {
		cp.Spec.Stop.Interval = &metav1.Duration{Duration: interval}
	}
	return cp
}

func TestChaosPodRulesNeedAClock(t *testing.T) {
	t.Parallel()
	_, err1 := admission.NewChaosPodV1Defaulter(nil)
	_, err2 := admission.NewChaosPodV2Defaulter(nil)
	_, err3 := admission.NewChaosPodV1Validator(nil)
	_, err4 := admission.NewChaosPodV2Validator(nil)
	for _, err := range []error{err1, err2, err3, err4} {
		assert.ErrorContains(t, err, "a clock is required")
	}
}

func TestDefaultChaosPod(t *testing.T) {
	t.Parallel()
	clock := memory.NewClock(now)
	d1, err := admission.NewChaosPodV1Defaulter(clock)
	require.NoError(t, err)
	d2, err := admission.NewChaosPodV2Defaulter(clock)
	require.NoError(t, err)
	tests := []struct {
		name         string
		stop         *metav1.Time
		interval     time.Duration
		want         *metav1.Time
		wantInterval time.Duration // v2 only
	}{
		{"unset", nil, 0, at(time.Minute), 10 * time.Second},
		{"past", at(-time.Second), 0, at(time.Minute), 10 * time.Second},
		{"future kept", at(5 * time.Minute), 0, at(5 * time.Minute), 10 * time.Second},
		{"interval kept", at(time.Hour), 3 * time.Second, at(time.Hour), 3 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cp1, cp2 := v1Pod(tt.stop), v2Pod(tt.stop, tt.interval)

			w1, err1 := d1.Default(context.Background(), cp1)
			w2, err2 := d2.Default(context.Background(), cp2)

			require.NoError(t, err1)
			require.NoError(t, err2)
			assert.Empty(t, append(w1, w2...))
			assert.True(t, tt.want.Equal(cp1.Spec.NextStop), "v1 %v", cp1.Spec.NextStop)
			assert.True(t, tt.want.Equal(cp2.Spec.Stop.At), "v2 %v", cp2.Spec.Stop.At)
			require.NotNil(t, cp2.Spec.Stop.Interval)
			assert.Equal(t, tt.wantInterval, cp2.Spec.Stop.Interval.Duration)
			assert.Equal(t, v1Pod(tt.want), cp1, "v1: only nextStop changes")
		})
	}
}

func TestValidateChaosPod(t *testing.T) {
	t.Parallel()
	clock := memory.NewClock(now)
	v1, err := admission.NewChaosPodV1Validator(clock)
	require.NoError(t, err)
	v2, err := admission.NewChaosPodV2Validator(clock)
	require.NoError(t, err)
	tests := []struct {
		name      string
		update    bool
		old, stop *metav1.Time
		interval  time.Duration
		v1Msg     string // "" = allowed
		v2Msg     string
	}{
		{"future on create", false, nil, at(time.Minute), 0, "", ""},
		{"unset on create", false, nil, nil, 0, "", ""},
		{"past on create", false, nil, at(-time.Minute), 0,
			".spec.nextStop must be later than current time", ".spec.stop.at must be later than current time"},
		{"now on create", false, nil, at(0), 0,
			".spec.nextStop must be later than current time", ".spec.stop.at must be later than current time"},
		{"past on update", true, at(time.Minute), at(-time.Minute), 0,
			".spec.nextStop must be later than current time", ".spec.stop.at must be later than current time"},
		{"delay of an hour", true, at(time.Minute), at(time.Hour + time.Minute), 0, "", ""},
		{"delay past an hour", true, at(time.Minute), at(time.Hour + 2*time.Minute), 0,
			"it is not allowed to delay .spec.nextStop for more than 1 hour",
			"it is not allowed to delay .spec.stop.at for more than 1 hour"},
		{"a far stop on create is no delay", false, nil, at(20 * time.Hour), 0, "", ""},
		{"new run after a passed stop", true, at(-time.Second), at(20 * time.Hour), 0, "", ""},
		{"no old stop", true, nil, at(20 * time.Hour), 0, "", ""},
		{"interval too short", false, nil, at(time.Minute), 500 * time.Millisecond,
			"", ".spec.stop.interval must be between 1s and 24h"},
		{"interval too long", true, nil, at(time.Minute), 25 * time.Hour,
			"", ".spec.stop.interval must be between 1s and 24h"},
		{"interval at bounds", false, nil, at(time.Minute), 24 * time.Hour, "", ""},
	}
	ctx := context.Background()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var (
				w1, w2     ports.Warnings
				err1, err2 error
			)
			if tt.update {
				w1, err1 = v1.ValidateUpdate(ctx, v1Pod(tt.old), v1Pod(tt.stop))
				w2, err2 = v2.ValidateUpdate(ctx, v2Pod(tt.old, 0), v2Pod(tt.stop, tt.interval))
			} else {
				w1, err1 = v1.ValidateCreate(ctx, v1Pod(tt.stop))
				w2, err2 = v2.ValidateCreate(ctx, v2Pod(tt.stop, tt.interval))
			}
			assert.Empty(t, append(w1, w2...))
			for _, c := range []struct {
				err  error
				want string
			}{{err1, tt.v1Msg}, {err2, tt.v2Msg}} {
				if c.want == "" {
					assert.Empty(t, denial(t, c.err))
				} else {
					assert.Contains(t, denial(t, c.err), c.want)
				}
			}
		})
	}
	_, err1 := v1.ValidateDelete(ctx, v1Pod(at(-time.Hour)))
	_, err2 := v2.ValidateDelete(ctx, v2Pod(at(-time.Hour), time.Nanosecond))
	assert.NoError(t, errors.Join(err1, err2), "deletions are admitted")
}
