package webhook_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/hexagonal-operator/operator/internal/adapters/webhook"
	"github.com/hexagonal-operator/operator/internal/ports"
)

// counter is the value of an unlabelled counter on g; -1 when absent.
func counter(t *testing.T, g prometheus.Gatherer, name string) float64 {
	t.Helper()
	families, err := g.Gather()
	require.NoError(t, err)
	for _, mf := range families {
		if mf.GetName() == name {
			require.Len(t, mf.GetMetric(), 1, name)
			return mf.GetMetric()[0].GetCounter().GetValue()
		}
	}
	return -1
}

// A panicking rule or conversion is counted, as controller-runtime counts
// them, each in its own unlabelled counter, present from the start.
func TestPanicsAreCounted(t *testing.T) {
	t.Parallel()
	hooks := []webhook.Hook{
		webhook.Validating(testHook("/panic"), validateFunc(func(context.Context, *corev1.Pod) (ports.Warnings, error) {
			panic("rule exploded")
		})),
	}
	convert := webhook.Conversion{Path: "/convert-panic", Convert: func(context.Context, []byte, string) ([]byte, error) {
		panic("conversion exploded")
	}}
	f := startFixture(t, hooks, nil, convert)
	const (
		admission  = "controller_runtime_webhook_panics_total"
		conversion = "controller_runtime_conversion_webhook_panics_total"
	)
	assert.Zero(t, counter(t, f.reg, admission))
	assert.Zero(t, counter(t, f.reg, conversion))

	resp, _ := f.post(t, "/panic", "application/json", podReview(t, "p1", admissionv1.Create, testPod(nil), nil))
	assert.Equal(t, http.StatusInternalServerError, resp.StatusCode)
	assert.Equal(t, 1.0, counter(t, f.reg, admission))
	assert.Zero(t, counter(t, f.reg, conversion))

	resp, _ = f.post(t, "/convert-panic", "application/json", conversionReview("c1", "chaosapps.metamagical.io/v1", v2ChaosPod))
	assert.Equal(t, http.StatusInternalServerError, resp.StatusCode)
	assert.Equal(t, 1.0, counter(t, f.reg, admission))
	assert.Equal(t, 1.0, counter(t, f.reg, conversion))
}
