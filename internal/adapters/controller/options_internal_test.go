package controller

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/types"

	"github.com/hexagonal-operator/operator/internal/ports"
)

func request(name string) ports.Request {
	return ports.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: name}}
}

func TestOptionsDefaults(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name          string
		in            Options
		timeout       time.Duration
		stuck         time.Duration
		validationErr string
	}{
		{name: "zero value", timeout: 60 * time.Second, stuck: 180 * time.Second},
		{name: "stuck follows the timeout", in: Options{ReconcileTimeout: 10 * time.Second}, timeout: 10 * time.Second, stuck: 30 * time.Second},
		{name: "explicit stuck threshold", in: Options{ReconcileTimeout: 10 * time.Second, StuckThreshold: time.Minute}, timeout: 10 * time.Second, stuck: time.Minute},
		{name: "negative timeout", in: Options{ReconcileTimeout: -time.Second, StuckThreshold: time.Second}, timeout: -time.Second, stuck: time.Second, validationErr: "reconcile timeout"},
		{name: "negative threshold", in: Options{StuckThreshold: -time.Second}, timeout: 60 * time.Second, stuck: -time.Second, validationErr: "stuck threshold"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := tt.in.withDefaults()
			assert.Equal(t, tt.timeout, got.ReconcileTimeout)
			assert.Equal(t, tt.stuck, got.StuckThreshold)
			if tt.validationErr == "" {
				assert.NoError(t, got.validate())
			} else {
				assert.ErrorContains(t, got.validate(), tt.validationErr)
			}
		})
	}
}

func TestDefaultRateLimiterBacksOffPerRequestFrom5ms(t *testing.T) {
	t.Parallel()
	rl := newRateLimiter()
	a, b := request("a"), request("b")
	assert.Equal(t, 5*time.Millisecond, rl.When(a))
	assert.Equal(t, 10*time.Millisecond, rl.When(a))
	assert.Equal(t, 5*time.Millisecond, rl.When(b), "back-off is per request")
	rl.Forget(a)
	assert.Equal(t, 5*time.Millisecond, rl.When(a), "Forget resets the back-off")
	for range 30 {
		rl.When(b)
	}
	assert.Equal(t, 1000*time.Second, rl.When(b), "capped at 1000s")

	other := newRateLimiter()
	assert.Equal(t, 5*time.Millisecond, other.When(a), "controllers do not share back-off state")
}
