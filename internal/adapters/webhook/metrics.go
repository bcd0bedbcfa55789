package webhook

import (
	"fmt"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are controller-runtime's webhook metrics, labelled by request
// path, and the request budget's own.
type metrics struct {
	total            *prometheus.CounterVec
	latency          *prometheus.HistogramVec
	inFlight         *prometheus.GaugeVec
	panics           prometheus.Counter // unlabelled, as controller-runtime's
	conversionPanics prometheus.Counter
	bodyBytes        prometheus.Gauge
	rejected         *prometheus.CounterVec
	rejectedConns    *prometheus.CounterVec
	evicted          *prometheus.CounterVec
	evictedConns     *prometheus.CounterVec
}

// Values of the label reason of operator_webhook_requests_rejected_total:
// the client_ ones refuse an address that holds its fair share of a full
// budget, the others a request for which nothing could be given up.
const (
	rejectedRequests        = "requests"
	rejectedBodyBytes       = "body_bytes"
	rejectedClientRequests  = "client_requests"
	rejectedClientBodyBytes = "client_body_bytes"
)

var rejectedReasons = []string{rejectedRequests, rejectedBodyBytes, rejectedClientRequests, rejectedClientBodyBytes}

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
		panics: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "controller_runtime_webhook_panics_total",
			Help: "Total number of webhook panics",
		}),
		conversionPanics: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "controller_runtime_conversion_webhook_panics_total",
			Help: "Total number of conversion webhook panics",
		}),
		bodyBytes: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "operator_webhook_body_bytes_in_flight",
			Help: "Bytes of memory the request bodies being read or served hold, out of the webhook server's budget.",
		}),
		rejected: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "operator_webhook_requests_rejected_total",
			Help: "Requests answered 429 because the webhook server's budget of requests or of body bytes in flight was spent and their client address held its fair share of it, or nothing could be given up for them.",
		}, []string{"webhook", "reason"}),
		rejectedConns: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "operator_webhook_connections_rejected_total",
			Help: "Connections to the webhook server reset as soon as they were accepted: every connection was taken and their client address held its fair share of them, or nothing could be given up for it.",
		}, []string{"reason"}),
		evicted: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "operator_webhook_requests_evicted_total",
			Help: "Requests given up, their connection reset, to make room for a client address below its fair share of the webhook server's budget.",
		}, []string{"webhook"}),
		evictedConns: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "operator_webhook_connections_evicted_total",
			Help: "Connections reset to make room for a client address below its fair share of the webhook server's connections, requests or body bytes, by the resource it needed, or, for connections, to make room for a new connection of the same address at its share.",
		}, []string{"resource"}),
	}
	for _, c := range []prometheus.Collector{m.total, m.latency, m.inFlight, m.panics, m.conversionPanics, m.bodyBytes, m.rejected, m.rejectedConns, m.evicted, m.evictedConns} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("register webhook metrics: %w", err)
		}
	}
	// Series exist from the start, so rate() and alerts see a zero.
	for _, reason := range rejectedConnReasons {
		m.rejectedConns.WithLabelValues(reason)
	}
	for _, name := range itemNames {
		m.evictedConns.WithLabelValues(name)
	}
	for _, p := range paths {
		m.evicted.WithLabelValues(p)
		m.total.WithLabelValues(p, "200")
		m.total.WithLabelValues(p, "500")
		m.latency.WithLabelValues(p)
		m.inFlight.WithLabelValues(p)
		for _, reason := range rejectedReasons {
			m.rejected.WithLabelValues(p, reason)
		}
	}
	return m, nil
}

// pathSeries are one path's series, looked up once rather than by label
// values on every request.
type pathSeries struct {
	path     string
	total    *prometheus.CounterVec
	ok       prometheus.Counter
	latency  prometheus.Observer
	inFlight prometheus.Gauge
}

func (m *metrics) forPath(path string) pathSeries {
	return pathSeries{path: path, total: m.total, ok: m.total.WithLabelValues(path, "200"),
		latency: m.latency.WithLabelValues(path), inFlight: m.inFlight.WithLabelValues(path)}
}

// end records the end of a request begun at start.
func (p pathSeries) end(start time.Time, code int) {
	p.inFlight.Dec()
	p.latency.Observe(time.Since(start).Seconds())
	if code == 200 {
		p.ok.Inc()
		return
	}
	p.total.WithLabelValues(p.path, strconv.Itoa(code)).Inc()
}
