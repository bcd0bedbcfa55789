package metrics

import (
	"crypto/tls"
	"crypto/x509"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

// The certificate expiry series of the metrics server. The webhook server
// exports the same metric for its certificates, under other `use` values,
// on the same registry: name and help must match its own.
const (
	certExpiryMetric = "operator_certificate_expiry_timestamp_seconds"
	certExpiryHelp   = "Expiry (NotAfter) of a certificate the operator serves, in Unix seconds, by use."
	certUseMetrics   = "metrics"
)

// certExpiry reads the served certificate at scrape time, so a renewal
// in --metrics-cert-path shows at once; before the server has a
// certificate (or in plain-HTTP mode) there is no series.
type certExpiry struct {
	desc *prometheus.Desc
	get  atomic.Pointer[func(*tls.ClientHelloInfo) (*tls.Certificate, error)]
}

func newCertExpiry() *certExpiry {
	return &certExpiry{desc: prometheus.NewDesc(certExpiryMetric, certExpiryHelp, nil, prometheus.Labels{"use": certUseMetrics})}
}

// Describe implements prometheus.Collector.
func (c *certExpiry) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

// Collect implements prometheus.Collector.
func (c *certExpiry) Collect(ch chan<- prometheus.Metric) {
	get := c.get.Load()
	if get == nil {
		return
	}
	cert, err := (*get)(&tls.ClientHelloInfo{})
	if err != nil || cert == nil || len(cert.Certificate) == 0 {
		return
	}
	leaf := cert.Leaf
	if leaf == nil {
		if leaf, err = x509.ParseCertificate(cert.Certificate[0]); err != nil {
			return
		}
	}
	ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(leaf.NotAfter.Unix()))
}
