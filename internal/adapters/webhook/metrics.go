package webhook

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hexagonal-operator/operator/internal/ports"
)

// metrics are controller-runtime's webhook metrics, labelled by
// request path so existing dashboards work.
type metrics struct {
	total    *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	inFlight *prometheus.GaugeVec
	// panics and conversionPanics count the admission rules and the
	// conversions that panicked (answered 500), as controller-runtime's
	// admission and conversion webhooks count theirs: without labels.
	panics           prometheus.Counter
	conversionPanics prometheus.Counter

	// The request budget's own figures, not controller-runtime's: how
	// much of it is taken, and the requests it turned away.
	bodyBytes     prometheus.Gauge
	rejected      *prometheus.CounterVec
	rejectedConns prometheus.Counter
}

// Why the budget turned a request away: the label reason of
// operator_webhook_requests_rejected_total. The client_ reasons are the
// share of one client address (budget), the others the whole budget.
const (
	rejectedRequests        = "requests"
	rejectedBodyBytes       = "body_bytes"
	rejectedClientRequests  = "client_requests"
	rejectedClientBodyBytes = "client_body_bytes"
)

// rejectedReasons are all values of the label reason.
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
			Help: "Requests answered 429 because the webhook server's budget of requests or of body bytes in flight, or their client address's share of it, was spent.",
		}, []string{"webhook", "reason"}),
		rejectedConns: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "operator_webhook_connections_rejected_total",
			Help: "Connections to the webhook server reset as soon as they were accepted because their client address held its share of connections.",
		}),
	}
	var errs []error
	for _, c := range []prometheus.Collector{m.total, m.latency, m.inFlight, m.panics, m.conversionPanics, m.bodyBytes, m.rejected, m.rejectedConns} {
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
		for _, reason := range rejectedReasons {
			m.rejected.WithLabelValues(p, reason)
		}
	}
	return m, nil
}

// pathMetrics are one path's series, looked up once: a request then
// records its metrics without hashing label values, except for a code other
// than 200.
type pathMetrics struct {
	m        *metrics
	path     string
	inFlight prometheus.Gauge
	latency  prometheus.Observer
	ok       prometheus.Counter
}

func (m *metrics) forPath(path string) *pathMetrics {
	return &pathMetrics{
		m:        m,
		path:     path,
		inFlight: m.inFlight.WithLabelValues(path),
		latency:  m.latency.WithLabelValues(path),
		ok:       m.total.WithLabelValues(path, "200"),
	}
}

// begin counts a request in flight; end records its end.
func (p *pathMetrics) begin() time.Time {
	p.inFlight.Inc()
	return time.Now()
}

func (p *pathMetrics) end(start time.Time, code int) {
	p.inFlight.Dec()
	p.latency.Observe(time.Since(start).Seconds())
	if code == http.StatusOK {
		p.ok.Inc()
		return
	}
	p.m.total.WithLabelValues(p.path, strconv.Itoa(code)).Inc()
}

// The expiry of the certificates the operator serves, one series per use.
// Each use is a constant label rather than a variable one, so that another
// package (the metrics server, for its own certificate) can register its
// series under the same name on the shared registry; the registry then
// requires the very same help text.
const (
	CertExpiryMetric = "operator_certificate_expiry_timestamp_seconds"
	CertExpiryHelp   = "Expiry (NotAfter) of a certificate the operator serves, in Unix seconds, by use."
	// CertUseWebhook is the webhook serving certificate, CertUseWebhookCA
	// the CA that signs it in self mode.
	CertUseWebhook   = "webhook"
	CertUseWebhookCA = "webhook-ca"
)

// caSigner is a certificate source that also holds the CA signing what it
// serves (SelfCertSource).
type caSigner interface {
	signingCA() *x509.Certificate
}

// certExpiry reads the certificates at scrape time, so a rotation shows
// without anyone having to update a gauge.
type certExpiry struct {
	certs       ports.CertSource
	serving, ca *prometheus.Desc
}

func newCertExpiry(certs ports.CertSource) *certExpiry {
	desc := func(use string) *prometheus.Desc {
		return prometheus.NewDesc(CertExpiryMetric, CertExpiryHelp, nil, prometheus.Labels{"use": use})
	}
	return &certExpiry{certs: certs, serving: desc(CertUseWebhook), ca: desc(CertUseWebhookCA)}
}

// registerCertExpiry adds the expiry series of certs to reg.
func registerCertExpiry(reg prometheus.Registerer, certs ports.CertSource) error {
	if err := reg.Register(newCertExpiry(certs)); err != nil {
		return fmt.Errorf("register webhook certificate metrics: %w", err)
	}
	return nil
}

func (c *certExpiry) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.serving
	if _, ok := c.certs.(caSigner); ok {
		ch <- c.ca
	}
}

// Collect leaves out a certificate not loaded yet: no series is better
// than a zero that an expiry alert would take for long expired.
func (c *certExpiry) Collect(ch chan<- prometheus.Metric) {
	if cert, err := c.certs.GetCertificate(&tls.ClientHelloInfo{}); err == nil {
		if leaf := leafOf(cert); leaf != nil {
			ch <- prometheus.MustNewConstMetric(c.serving, prometheus.GaugeValue, float64(leaf.NotAfter.Unix()))
		}
	}
	if s, ok := c.certs.(caSigner); ok {
		if ca := s.signingCA(); ca != nil {
			ch <- prometheus.MustNewConstMetric(c.ca, prometheus.GaugeValue, float64(ca.NotAfter.Unix()))
		}
	}
}

func leafOf(cert *tls.Certificate) *x509.Certificate {
	switch {
	case cert == nil || len(cert.Certificate) == 0:
		return nil
	case cert.Leaf != nil:
		return cert.Leaf
	}
	leaf, err := x509.ParseCertificate(cert.Certificate[0])
	if err != nil {
		return nil
	}
	return leaf
}
