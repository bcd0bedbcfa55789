package admission_test

import (
	"context"
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

func TestDefaultChaosPodV1(t *testing.T) {
	t.Parallel()
	d, err := admission.NewChaosPodDefaulter(memory.NewClock(now))
	require.NoError(t, err)
	tests := []struct {
		name string
		op   ports.Operation
		stop *metav1.Time
		want *metav1.Time // nil: unchanged
	}{
		{"unset on create", ports.OperationCreate, nil, at(time.Minute)},
		{"past on update", ports.OperationUpdate, at(-time.Second), at(time.Minute)},
		{"future kept", ports.OperationCreate, at(5 * time.Minute), nil},
		{"delete ignored", ports.OperationDelete, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			obj := v1Pod(tt.stop)
			req := ports.AdmissionRequest[chaosv1.ChaosPod]{Operation: tt.op, Object: obj}
			if tt.op == ports.OperationDelete {
				req.Object, req.OldObject = nil, obj
			}
			m, err := d.DefaultV1(context.Background(), req)
			require.NoError(t, err)
			assert.True(t, m.Allowed)
			if tt.want == nil {
				assert.Nil(t, m.Object)
				return
			}
			require.NotNil(t, m.Object)
			assert.True(t, tt.want.Equal(m.Object.Spec.NextStop))
			assert.Equal(t, tt.stop, obj.Spec.NextStop, "request object modified")
		})
	}
}

func TestDefaultChaosPodV2(t *testing.T) {
	t.Parallel()
	d, err := admission.NewChaosPodDefaulter(memory.NewClock(now))
	require.NoError(t, err)

	m, err := d.DefaultV2(context.Background(), ports.AdmissionRequest[chaosv2.ChaosPod]{
		Operation: ports.OperationCreate, Object: v2Pod(nil, 0)})
	require.NoError(t, err)
	require.NotNil(t, m.Object)
	assert.True(t, at(time.Minute).Equal(m.Object.Spec.Stop.At))
	assert.Equal(t, 10*time.Second, m.Object.Spec.Stop.Interval.Duration)

	m, err = d.DefaultV2(context.Background(), ports.AdmissionRequest[chaosv2.ChaosPod]{
		Operation: ports.OperationCreate, Object: v2Pod(at(time.Hour), 3*time.Second)})
	require.NoError(t, err)
	assert.Nil(t, m.Object)
}

func TestValidateChaosPod(t *testing.T) {
	t.Parallel()
	v, err := admission.NewChaosPodValidator(memory.NewClock(now))
	require.NoError(t, err)
	tests := []struct {
		name      string
		op        ports.Operation
		old, stop *metav1.Time
		interval  time.Duration
		v1Msg     string // "" = allowed
		v2Msg     string
	}{
		{"future on create", ports.OperationCreate, nil, at(time.Minute), 0, "", ""},
		{"past on create", ports.OperationCreate, nil, at(-time.Minute), 0,
			".spec.nextStop must be later than current time", ".spec.stop.at must be later than current time"},
		{"now on create", ports.OperationCreate, nil, at(0), 0,
			".spec.nextStop must be later than current time", ".spec.stop.at must be later than current time"},
		{"delay of an hour", ports.OperationUpdate, at(time.Minute), at(time.Hour + time.Minute), 0, "", ""},
		{"delay past an hour", ports.OperationUpdate, at(time.Minute), at(time.Hour + 2*time.Minute), 0,
			"it is not allowed to delay .spec.nextStop for more than 1 hour",
			"it is not allowed to delay .spec.stop.at for more than 1 hour"},
		{"new run after a passed stop", ports.OperationUpdate, at(-time.Second), at(20 * time.Hour), 0, "", ""},
		{"interval too short", ports.OperationCreate, nil, at(time.Minute), 500 * time.Millisecond,
			"", ".spec.stop.interval must be between 1s and 24h"},
		{"interval too long", ports.OperationUpdate, nil, at(time.Minute), 25 * time.Hour,
			"", ".spec.stop.interval must be between 1s and 24h"},
		{"interval at bounds", ports.OperationCreate, nil, at(time.Minute), 24 * time.Hour, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			req1 := ports.AdmissionRequest[chaosv1.ChaosPod]{Operation: tt.op, Object: v1Pod(tt.stop)}
			req2 := ports.AdmissionRequest[chaosv2.ChaosPod]{Operation: tt.op, Object: v2Pod(tt.stop, tt.interval)}
			if tt.op == ports.OperationUpdate {
				req1.OldObject = v1Pod(tt.old)
				req2.OldObject = v2Pod(tt.old, 0)
			}
			got1, err := v.ValidateV1(context.Background(), req1)
			require.NoError(t, err)
			got2, err := v.ValidateV2(context.Background(), req2)
			require.NoError(t, err)
			for _, c := range []struct {
				got  ports.Verdict
				want string
			}{{got1, tt.v1Msg}, {got2, tt.v2Msg}} {
				if c.want == "" {
					assert.True(t, c.got.Allowed, c.got.Message)
				} else {
					assert.False(t, c.got.Allowed)
					assert.Contains(t, c.got.Message, c.want)
				}
			}
		})
	}
}
