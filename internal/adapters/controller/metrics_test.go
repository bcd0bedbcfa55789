package controller_test

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hexagonal-operator/operator/internal/adapters/controller"
)

func TestMetricsExistAtZeroBeforeStart(t *testing.T) {
	t.Parallel()
	e := newEnv()
	build(t, e, "things", newSource("Thing"), 3, controller.Options{}, newRecorder(nil))

	ctl := []string{"controller", "things"}
	for _, result := range []string{"success", "error", "requeue_after", "requeue"} {
		assert.Zero(t, metric(t, e.reg, "controller_runtime_reconcile_total", "controller", "things", "result", result), result)
	}
	for _, name := range []string{
		"controller_runtime_reconcile_errors_total",
		"controller_runtime_terminal_reconcile_errors_total",
		"controller_runtime_reconcile_panics_total",
		"controller_runtime_reconcile_timeouts_total",
		"controller_runtime_reconcile_time_seconds",
		"controller_runtime_active_workers",
	} {
		assert.Zero(t, metric(t, e.reg, name, ctl...), name)
	}
	assert.Equal(t, 3.0, metric(t, e.reg, "controller_runtime_max_concurrent_reconciles", ctl...))
	for _, name := range []string{
		"workqueue_depth", "workqueue_adds_total", "workqueue_queue_duration_seconds",
		"workqueue_work_duration_seconds", "workqueue_retries_total",
		"workqueue_unfinished_work_seconds", "workqueue_longest_running_processor_seconds",
	} {
		assert.Zero(t, metric(t, e.reg, name, "name", "things"), name)
	}
}

func TestControllersShareARegistry(t *testing.T) {
	t.Parallel()
	e := newEnv()
	srcA, srcB := newSource("A"), newSource("B")
	ra, rb := newRecorder(nil), newRecorder(nil)
	a := build(t, e, "alpha", srcA, 1, controller.Options{}, ra)
	b := build(t, e, "beta", srcB, 2, controller.Options{}, rb)
	start(t, a)
	start(t, b)

	srcA.add(object("ns", "x"))
	srcB.add(object("ns", "x"))
	srcB.add(object("ns", "y"))
	require.Eventually(t, func() bool { return ra.total() == 1 && rb.total() == 2 }, waitFor, tick)
	// The counters move after the reconciler returns.
	require.Eventually(t, func() bool {
		return metric(t, e.reg, "controller_runtime_reconcile_total", "controller", "beta", "result", "success") == 2 &&
			metric(t, e.reg, "controller_runtime_reconcile_total", "controller", "alpha", "result", "success") == 1
	}, waitFor, tick)

	assert.Equal(t, 1.0, metric(t, e.reg, "workqueue_adds_total", "name", "alpha"))
	assert.Equal(t, 2.0, metric(t, e.reg, "workqueue_adds_total", "name", "beta"))
	assert.Equal(t, 1.0, metric(t, e.reg, "controller_runtime_max_concurrent_reconciles", "controller", "alpha"))
	assert.Equal(t, 2.0, metric(t, e.reg, "controller_runtime_max_concurrent_reconciles", "controller", "beta"))
}

func TestMetricsProviderReusesRegisteredVectors(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewPedanticRegistry()
	p1, err := controller.NewQueueMetrics(reg)
	require.NoError(t, err)
	p2, err := controller.NewQueueMetrics(reg)
	require.NoError(t, err)

	p1.NewAddsMetric("q").Inc()
	p2.NewAddsMetric("q").Inc()
	assert.Equal(t, 2.0, metric(t, reg, "workqueue_adds_total", "name", "q"), "both providers count into one series")
}

func TestHistogramBucketsMatchControllerRuntime(t *testing.T) {
	t.Parallel()
	e := newEnv()
	build(t, e, "things", newSource("Thing"), 1, controller.Options{}, newRecorder(nil))
	families, err := e.reg.Gather()
	require.NoError(t, err)
	bounds := map[string][]float64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			if h := m.GetHistogram(); h != nil {
				for _, b := range h.GetBucket() {
					bounds[f.GetName()] = append(bounds[f.GetName()], b.GetUpperBound())
				}
			}
		}
	}
	reconcile := bounds["controller_runtime_reconcile_time_seconds"]
	require.Len(t, reconcile, 40)
	assert.Equal(t, 0.005, reconcile[0])
	assert.Equal(t, 60.0, reconcile[39])
	for _, name := range []string{"workqueue_queue_duration_seconds", "workqueue_work_duration_seconds"} {
		assert.InDeltaSlice(t, prometheus.ExponentialBuckets(10e-9, 10, 12), bounds[name], 1e-12, name)
	}
}
