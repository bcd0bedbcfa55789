package controller

import (
	"errors"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/util/workqueue"
)

// Result label values of controller_runtime_reconcile_total, as
// controller-runtime spells them; "requeue" counts the reconciles that
// failed with ports.ErrConflict, retried without counting an error.
const (
	resultSuccess      = "success"
	resultError        = "error"
	resultRequeueAfter = "requeue_after"
	resultRequeue      = "requeue"
)

// registerOnce registers c on reg, or returns the one registered before,
// which controllers share; after an error in *errp it does nothing.
func registerOnce[C prometheus.Collector](reg prometheus.Registerer, c C, errp *error) C {
	if *errp != nil {
		return c
	}
	err := reg.Register(c)
	var are prometheus.AlreadyRegisteredError
	switch {
	case err == nil:
	case errors.As(err, &are):
		if existing, ok := are.ExistingCollector.(C); ok {
			return existing
		}
		*errp = fmt.Errorf("register metrics: a %T is already registered instead of a %T", are.ExistingCollector, c)
	default:
		*errp = fmt.Errorf("register metrics: %w", err)
	}
	return c
}

// reconcileMetrics are controller-runtime's metrics, curried to one
// controller.
type reconcileMetrics struct {
	total      map[string]prometheus.Counter
	errors     prometheus.Counter
	terminal   prometheus.Counter
	panics     prometheus.Counter
	timeouts   prometheus.Counter
	time       prometheus.Observer
	active     prometheus.Gauge
	cacheWaits prometheus.Counter
	overruns   prometheus.Counter
}

func newReconcileMetrics(reg prometheus.Registerer, name string) (*reconcileMetrics, error) {
	var err error
	counter := func(metric, help string) prometheus.Counter {
		return registerOnce(reg, prometheus.NewCounterVec(prometheus.CounterOpts{Name: metric, Help: help}, []string{"controller"}), &err).WithLabelValues(name)
	}
	// WithLabelValues creates every series at zero, as controller-runtime
	// does, so that alerts see 0 rather than nothing.
	m := &reconcileMetrics{
		total:    map[string]prometheus.Counter{},
		errors:   counter("controller_runtime_reconcile_errors_total", "Total number of reconciliation errors per controller"),
		terminal: counter("controller_runtime_terminal_reconcile_errors_total", "Total number of terminal reconciliation errors per controller"),
		panics:   counter("controller_runtime_reconcile_panics_total", "Total number of reconciliation panics per controller"),
		timeouts: counter("controller_runtime_reconcile_timeouts_total", "Total number of reconciliation timeouts per controller"),
		time: registerOnce(reg, prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "controller_runtime_reconcile_time_seconds",
			Help: "Length of time per reconciliation per controller",
			Buckets: []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0,
				1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60},
		}, []string{"controller"}), &err).WithLabelValues(name),
		active: registerOnce(reg, prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "controller_runtime_active_workers",
			Help: "Number of currently used workers per controller",
		}, []string{"controller"}), &err).WithLabelValues(name),
		cacheWaits: counter("operator_reconcile_cache_waits_total",
			"Reconciles that waited for the cache to apply the previous reconcile's writes, per controller"),
		overruns: counter("operator_reconcile_overruns_total",
			"Reconciles still running well past their timeout (ignoring their context), per controller"),
	}
	total := registerOnce(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "controller_runtime_reconcile_total",
		Help: "Total number of reconciliations per controller",
	}, []string{"controller", "result"}), &err)
	for _, res := range []string{resultSuccess, resultError, resultRequeueAfter, resultRequeue} {
		m.total[res] = total.WithLabelValues(name, res)
	}
	if err != nil {
		return nil, err
	}
	return m, nil
}

// claimName registers controller_runtime_max_concurrent_reconciles with
// controller as a constant label, not on a shared vector, so that a
// duplicate controller name fails to register.
func claimName(reg prometheus.Registerer, name string, workers int) error {
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        "controller_runtime_max_concurrent_reconciles",
		Help:        "Maximum number of concurrent reconciles per controller",
		ConstLabels: prometheus.Labels{"controller": name},
	})
	g.Set(float64(workers))
	err := reg.Register(g)
	var are prometheus.AlreadyRegisteredError
	if errors.As(err, &are) {
		return fmt.Errorf("controller %q already exists on this metrics registry", name)
	}
	if err != nil {
		return fmt.Errorf("register metrics of controller %q: %w", name, err)
	}
	return nil
}

// queueMetrics provides controller-runtime's workqueue metrics (label name
// = the queue's name) on the given registry, not client-go's global one.
type queueMetrics struct {
	depth                   *prometheus.GaugeVec
	adds                    *prometheus.CounterVec
	latency                 *prometheus.HistogramVec
	workDuration            *prometheus.HistogramVec
	unfinished              *prometheus.GaugeVec
	longestRunningProcessor *prometheus.GaugeVec
	retries                 *prometheus.CounterVec
}

var _ workqueue.MetricsProvider = (*queueMetrics)(nil)

func newQueueMetrics(reg prometheus.Registerer) (*queueMetrics, error) {
	var err error
	labels := []string{"name"}
	histogram := func(name, help string) *prometheus.HistogramVec {
		return registerOnce(reg, prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Subsystem: "workqueue", Name: name, Help: help,
			Buckets:                         prometheus.ExponentialBuckets(10e-9, 10, 12),
			NativeHistogramBucketFactor:     1.1,
			NativeHistogramMaxBucketNumber:  100,
			NativeHistogramMinResetDuration: time.Hour,
		}, labels), &err)
	}
	gauge := func(name, help string) *prometheus.GaugeVec {
		return registerOnce(reg, prometheus.NewGaugeVec(prometheus.GaugeOpts{Subsystem: "workqueue", Name: name, Help: help}, labels), &err)
	}
	counter := func(name, help string) *prometheus.CounterVec {
		return registerOnce(reg, prometheus.NewCounterVec(prometheus.CounterOpts{Subsystem: "workqueue", Name: name, Help: help}, labels), &err)
	}
	p := &queueMetrics{
		depth:        gauge("depth", "Current depth of workqueue"),
		adds:         counter("adds_total", "Total number of adds handled by workqueue"),
		latency:      histogram("queue_duration_seconds", "How long in seconds an item stays in workqueue before being requested"),
		workDuration: histogram("work_duration_seconds", "How long in seconds processing an item from workqueue takes."),
		unfinished: gauge("unfinished_work_seconds", "How many seconds of work has been done that is in progress and hasn't been observed by work_duration. "+
			"Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at which this increases."),
		longestRunningProcessor: gauge("longest_running_processor_seconds", "How many seconds has the longest running processor for workqueue been running."),
		retries:                 counter("retries_total", "Total number of retries handled by workqueue"),
	}
	if err != nil {
		return nil, err
	}
	return p, nil
}

// init creates every series of queue name at zero, before the queue exists.
func (p *queueMetrics) init(name string) {
	p.NewDepthMetric(name)
	p.NewAddsMetric(name)
	p.NewLatencyMetric(name)
	p.NewWorkDurationMetric(name)
	p.NewUnfinishedWorkSecondsMetric(name)
	p.NewLongestRunningProcessorSecondsMetric(name)
	p.NewRetriesMetric(name)
}

// The workqueue.MetricsProvider methods: a queue's series by its name.
func (p *queueMetrics) NewDepthMetric(name string) workqueue.GaugeMetric {
	return p.depth.WithLabelValues(name)
}
func (p *queueMetrics) NewAddsMetric(name string) workqueue.CounterMetric {
	return p.adds.WithLabelValues(name)
}
func (p *queueMetrics) NewLatencyMetric(name string) workqueue.HistogramMetric {
	return p.latency.WithLabelValues(name)
}
func (p *queueMetrics) NewWorkDurationMetric(name string) workqueue.HistogramMetric {
	return p.workDuration.WithLabelValues(name)
}
func (p *queueMetrics) NewUnfinishedWorkSecondsMetric(name string) workqueue.SettableGaugeMetric {
	return p.unfinished.WithLabelValues(name)
}
func (p *queueMetrics) NewLongestRunningProcessorSecondsMetric(name string) workqueue.SettableGaugeMetric {
	return p.longestRunningProcessor.WithLabelValues(name)
}
func (p *queueMetrics) NewRetriesMetric(name string) workqueue.CounterMetric {
	return p.retries.WithLabelValues(name)
}
