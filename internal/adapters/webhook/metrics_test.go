package webhook_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
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

// The source counts every read of its files and every failed one, in
// controller-runtime's certwatcher counters.
func TestFileCertSourceCountsItsReads(t *testing.T) {
	t.Parallel()
	ca, err := webhook.NewTestCA()
	require.NoError(t, err)
	dir := t.TempDir()
	writePair(t, dir, issue(t, ca, time.Hour))
	src, err := webhook.NewFileCertSource(webhook.CertFiles{Dir: dir}, 10*time.Millisecond, zap.NewNop())
	require.NoError(t, err)
	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, src.RegisterMetrics(reg))
	const (
		reads  = "certwatcher_read_certificate_total"
		errors = "certwatcher_read_certificate_errors_total"
	)
	assert.Zero(t, counter(t, reg, reads))
	assert.Zero(t, counter(t, reg, errors))

	require.NoError(t, src.Start(context.Background()))
	t.Cleanup(func() { require.NoError(t, src.Stop(context.Background())) })
	assert.GreaterOrEqual(t, counter(t, reg, reads), 1.0)
	assert.Zero(t, counter(t, reg, errors))

	// A bad certificate file: each read of it fails, and is counted, while
	// the previous pair keeps being served.
	require.NoError(t, os.WriteFile(filepath.Join(dir, webhook.CertFileName), []byte("not a certificate"), 0o600))
	require.Eventually(t, func() bool { return counter(t, reg, errors) >= 2 }, 5*time.Second, 10*time.Millisecond)
	assert.Greater(t, counter(t, reg, reads), counter(t, reg, errors))
	_, err = src.GetCertificate(nil)
	assert.NoError(t, err)

	// A second source on the registry counts into the same series.
	other, err := webhook.NewFileCertSource(webhook.CertFiles{Dir: t.TempDir()}, time.Second, zap.NewNop())
	require.NoError(t, err)
	require.NoError(t, other.RegisterMetrics(reg))
	before := counter(t, reg, errors)
	require.Error(t, other.Start(context.Background()))
	assert.GreaterOrEqual(t, counter(t, reg, errors), before+1)
	n, err := testutil.GatherAndCount(reg, reads, errors)
	require.NoError(t, err)
	assert.Equal(t, 2, n)
}
