package webhook

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are controller-runtime's webhook metrics (SPEC §3), labelled by
// request path so existing dashboards work.
type metrics struct {
	total    *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	inFlight *prometheus.GaugeVec
}

func newMetrics(reg prometheus.Registerer, paths []string) (*metrics, error) {
	m := &metrics{
		total: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "controller_runtime_webhook_requests_total",
			Help: "Total number of admission requests by HTTP status code.",
		}, []string{"webhook", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "controller_runtime_webhook_latency_seconds",
			Help: "Histogram of the latency of processing admission requests",
		}, []string{"webhook"}),
		inFlight: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "controller_runtime_webhook_requests_in_flight",
			Help: "Current number of admission requests being served.",
		}, []string{"webhook"}),
	}
	var errs []error
	for _, c := range []prometheus.Collector{m.total, m.latency, m.inFlight} {
		if err := reg.Register(c); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("register webhook metrics: %w", err)
	}
	// Series exist from the start, so rate() and alerts see a zero rather
	// than nothing before the first request.
	for _, p := range paths {
		m.total.WithLabelValues(p, "200")
		m.total.WithLabelValues(p, "500")
		m.latency.WithLabelValues(p)
		m.inFlight.WithLabelValues(p)
	}
	return m, nil
}

// begin counts a request in flight; the returned func records its end.
func (m *metrics) begin(path string) func(code int) {
	start := time.Now()
	g := m.inFlight.WithLabelValues(path)
	g.Inc()
	return func(code int) {
		g.Dec()
		m.latency.WithLabelValues(path).Observe(time.Since(start).Seconds())
		m.total.WithLabelValues(path, strconv.Itoa(code)).Inc()
	}
}
