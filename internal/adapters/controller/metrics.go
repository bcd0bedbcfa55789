package controller

import (
	"errors"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/util/workqueue"
)

// Result label values of controller_runtime_reconcile_total, as
// controller-runtime spells them. "requeue" is controller-runtime's
// Result.Requeue, which ports.Result does not have: it counts the
// reconciles that failed with ports.ErrConflict and are retried without
// counting an error.
const (
	resultSuccess      = "success"
	resultError        = "error"
	resultRequeueAfter = "requeue_after"
	resultRequeue      = "requeue"
)

// register adds c to reg, or returns the collector already registered under
// the same description: several controllers (and tests) share a registry,
// and each metric vector must exist once in it.
func register[C prometheus.Collector](reg prometheus.Registerer, c C) (C, error) {
	err := reg.Register(c)
	if err == nil {
		return c, nil
	}
	var are prometheus.AlreadyRegisteredError
	if errors.As(err, &are) {
		if existing, ok := are.ExistingCollector.(C); ok {
			return existing, nil
		}
		return c, fmt.Errorf("register metrics: a %T is already registered instead of a %T", are.ExistingCollector, c)
	}
	return c, fmt.Errorf("register metrics: %w", err)
}

// reconcileMetrics are controller-runtime's controller metrics, under its
// names so existing dashboards work, curried to one controller.
type reconcileMetrics struct {
	total    map[string]prometheus.Counter
	errors   prometheus.Counter
	terminal prometheus.Counter
	panics   prometheus.Counter
	// timeouts counts reconciles whose own deadline (ReconcileTimeout)
	// ended their context, as controller-runtime's ReconciliationTimeout.
	timeouts prometheus.Counter
	time     prometheus.Observer
	active   prometheus.Gauge
	// cacheWaits counts reconciles that waited for the cache to apply the
	// previous reconcile's writes: each is a stale read prevented.
	cacheWaits prometheus.Counter
	// overruns counts reconciles still running well past their timeout.
	overruns prometheus.Counter
}

func newReconcileMetrics(reg prometheus.Registerer, name string) (*reconcileMetrics, error) {
	total, err := register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "controller_runtime_reconcile_total",
		Help: "Total number of reconciliations per controller",
	}, []string{"controller", "result"}))
	if err != nil {
		return nil, err
	}
	errs, err := register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "controller_runtime_reconcile_errors_total",
		Help: "Total number of reconciliation errors per controller",
	}, []string{"controller"}))
	if err != nil {
		return nil, err
	}
	terminal, err := register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "controller_runtime_terminal_reconcile_errors_total",
		Help: "Total number of terminal reconciliation errors per controller",
	}, []string{"controller"}))
	if err != nil {
		return nil, err
	}
	panics, err := register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "controller_runtime_reconcile_panics_total",
		Help: "Total number of reconciliation panics per controller",
	}, []string{"controller"}))
	if err != nil {
		return nil, err
	}
	timeouts, err := register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "controller_runtime_reconcile_timeouts_total",
		Help: "Total number of reconciliation timeouts per controller",
	}, []string{"controller"}))
	if err != nil {
		return nil, err
	}
	reconcileTime, err := register(reg, prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "controller_runtime_reconcile_time_seconds",
		Help: "Length of time per reconciliation per controller",
		Buckets: []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0,
			1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60},
	}, []string{"controller"}))
	if err != nil {
		return nil, err
	}
	active, err := register(reg, prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "controller_runtime_active_workers",
		Help: "Number of currently used workers per controller",
	}, []string{"controller"}))
	if err != nil {
		return nil, err
	}

	cacheWaits, err := register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "operator_reconcile_cache_waits_total",
		Help: "Reconciles that waited for the cache to apply the previous reconcile's writes, per controller",
	}, []string{"controller"}))
	if err != nil {
		return nil, err
	}

	overruns, err := register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "operator_reconcile_overruns_total",
		Help: "Reconciles still running well past their timeout (ignoring their context), per controller",
	}, []string{"controller"}))
	if err != nil {
		return nil, err
	}

	// WithLabelValues creates every series now, at zero, as
	// controller-runtime does: rate() and alerts see 0 rather than nothing
	// before the first reconcile.
	m := &reconcileMetrics{
		total:    map[string]prometheus.Counter{},
		errors:   errs.WithLabelValues(name),
		terminal: terminal.WithLabelValues(name),
		panics:   panics.WithLabelValues(name),
		timeouts: timeouts.WithLabelValues(name),
		time:     reconcileTime.WithLabelValues(name),
		active:   active.WithLabelValues(name),

		cacheWaits: cacheWaits.WithLabelValues(name),
		overruns:   overruns.WithLabelValues(name),
	}
	for _, r := range []string{resultSuccess, resultError, resultRequeueAfter, resultRequeue} {
		m.total[r] = total.WithLabelValues(name, r)
	}
	return m, nil
}

// workersDesc is controller_runtime_max_concurrent_reconciles. Each
// controller registers its own constant series (controller as a constant
// label) rather than a shared vector: registering the same name twice on
// one registry then fails, which is how a duplicate controller name is
// detected without any process-wide bookkeeping.
func workersDesc(name string) *prometheus.Desc {
	return prometheus.NewDesc("controller_runtime_max_concurrent_reconciles",
		"Maximum number of concurrent reconciles per controller",
		nil, prometheus.Labels{"controller": name})
}

type workersCollector struct {
	desc    *prometheus.Desc
	workers int
}

func (w workersCollector) Describe(ch chan<- *prometheus.Desc) { ch <- w.desc }

func (w workersCollector) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(w.desc, prometheus.GaugeValue, float64(w.workers))
}

// claimName registers the controller's identity series; it fails when a
// controller of that name already exists on reg.
func claimName(reg prometheus.Registerer, name string, workers int) error {
	err := reg.Register(workersCollector{desc: workersDesc(name), workers: workers})
	if err == nil {
		return nil
	}
	var are prometheus.AlreadyRegisteredError
	if errors.As(err, &are) {
		return fmt.Errorf("controller %q already exists on this metrics registry", name)
	}
	return fmt.Errorf("register metrics of controller %q: %w", name, err)
}

// MetricsProvider gives client-go's work queues controller-runtime's
// workqueue metrics (label name = the queue's name), registered on
// a registry of the caller's choosing instead of client-go's process-wide
// provider.
//
// One MetricsProvider per registry is enough, but several are harmless: they
// share the registry's vectors.
type MetricsProvider struct {
	depth                   *prometheus.GaugeVec
	adds                    *prometheus.CounterVec
	latency                 *prometheus.HistogramVec
	workDuration            *prometheus.HistogramVec
	unfinished              *prometheus.GaugeVec
	longestRunningProcessor *prometheus.GaugeVec
	retries                 *prometheus.CounterVec
}

var _ workqueue.MetricsProvider = (*MetricsProvider)(nil)

// NewMetricsProvider registers the workqueue metric vectors on reg, or
// reuses those already there.
func NewMetricsProvider(reg prometheus.Registerer) (*MetricsProvider, error) {
	if reg == nil {
		return nil, errors.New("new workqueue metrics: registerer is nil")
	}
	const subsystem = "workqueue"
	labels := []string{"name"}
	var p MetricsProvider
	var err error
	if p.depth, err = register(reg, prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Subsystem: subsystem, Name: "depth",
		Help: "Current depth of workqueue",
	}, labels)); err != nil {
		return nil, err
	}
	if p.adds, err = register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
		Subsystem: subsystem, Name: "adds_total",
		Help: "Total number of adds handled by workqueue",
	}, labels)); err != nil {
		return nil, err
	}
	if p.latency, err = register(reg, prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Subsystem: subsystem, Name: "queue_duration_seconds",
		Help:                            "How long in seconds an item stays in workqueue before being requested",
		Buckets:                         prometheus.ExponentialBuckets(10e-9, 10, 12),
		NativeHistogramBucketFactor:     1.1,
		NativeHistogramMaxBucketNumber:  100,
		NativeHistogramMinResetDuration: time.Hour,
	}, labels)); err != nil {
		return nil, err
	}
	if p.workDuration, err = register(reg, prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Subsystem: subsystem, Name: "work_duration_seconds",
		Help:                            "How long in seconds processing an item from workqueue takes.",
		Buckets:                         prometheus.ExponentialBuckets(10e-9, 10, 12),
		NativeHistogramBucketFactor:     1.1,
		NativeHistogramMaxBucketNumber:  100,
		NativeHistogramMinResetDuration: time.Hour,
	}, labels)); err != nil {
		return nil, err
	}
	if p.unfinished, err = register(reg, prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Subsystem: subsystem, Name: "unfinished_work_seconds",
		Help: "How many seconds of work has been done that is in progress and hasn't been observed by work_duration. " +
			"Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at which this increases.",
	}, labels)); err != nil {
		return nil, err
	}
	if p.longestRunningProcessor, err = register(reg, prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Subsystem: subsystem, Name: "longest_running_processor_seconds",
		Help: "How many seconds has the longest running processor for workqueue been running.",
	}, labels)); err != nil {
		return nil, err
	}
	if p.retries, err = register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
		Subsystem: subsystem, Name: "retries_total",
		Help: "Total number of retries handled by workqueue",
	}, labels)); err != nil {
		return nil, err
	}
	return &p, nil
}

// init creates every series of queue name at zero, before the queue exists
// (it is only made when the controller starts).
func (p *MetricsProvider) init(name string) {
	p.NewDepthMetric(name)
	p.NewAddsMetric(name)
	p.NewLatencyMetric(name)
	p.NewWorkDurationMetric(name)
	p.NewUnfinishedWorkSecondsMetric(name)
	p.NewLongestRunningProcessorSecondsMetric(name)
	p.NewRetriesMetric(name)
}

// NewDepthMetric implements workqueue.MetricsProvider.
func (p *MetricsProvider) NewDepthMetric(name string) workqueue.GaugeMetric {
	return p.depth.WithLabelValues(name)
}

// NewAddsMetric implements workqueue.MetricsProvider.
func (p *MetricsProvider) NewAddsMetric(name string) workqueue.CounterMetric {
	return p.adds.WithLabelValues(name)
}

// NewLatencyMetric implements workqueue.MetricsProvider.
func (p *MetricsProvider) NewLatencyMetric(name string) workqueue.HistogramMetric {
	return p.latency.WithLabelValues(name)
}

// NewWorkDurationMetric implements workqueue.MetricsProvider.
func (p *MetricsProvider) NewWorkDurationMetric(name string) workqueue.HistogramMetric {
	return p.workDuration.WithLabelValues(name)
}

// NewUnfinishedWorkSecondsMetric implements workqueue.MetricsProvider.
func (p *MetricsProvider) NewUnfinishedWorkSecondsMetric(name string) workqueue.SettableGaugeMetric {
	return p.unfinished.WithLabelValues(name)
}

// NewLongestRunningProcessorSecondsMetric implements workqueue.MetricsProvider.
func (p *MetricsProvider) NewLongestRunningProcessorSecondsMetric(name string) workqueue.SettableGaugeMetric {
	return p.longestRunningProcessor.WithLabelValues(name)
}

// NewRetriesMetric implements workqueue.MetricsProvider.
func (p *MetricsProvider) NewRetriesMetric(name string) workqueue.CounterMetric {
	return p.retries.WithLabelValues(name)
}
