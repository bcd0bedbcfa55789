package certs

import (
	"context"
	"crypto/tls"
	"crypto/x509"

	"github.com/prometheus/client_golang/prometheus"
)

// Source hands a server its current serving certificate, which may change
// without a restart.
type Source interface {
	Start(ctx context.Context) error
	Stop(ctx context.Context) error
	// GetCertificate fits tls.Config.GetCertificate: concurrent, no I/O;
	// it fails before Start.
	GetCertificate(hello *tls.ClientHelloInfo) (*tls.Certificate, error)
}

var (
	_ Source = (*FileSource)(nil)
	_ Source = (*SelfIssued)(nil)
	_ Source = (*SelfSigned)(nil)
)

// Certificates are the serving certificates of the operator's servers.
type Certificates struct {
	Webhook Source
	Metrics Source
}

// Reads are controller-runtime's certwatcher counters of reads of
// certificate files, shared by every [FileSource] of a process.
type Reads struct {
	Total, Errors prometheus.Counter
}

// NewReads returns counters registered nowhere.
func NewReads() Reads {
	return Reads{
		Total:  prometheus.NewCounter(prometheus.CounterOpts{Name: "certwatcher_read_certificate_total", Help: "Total number of certificate reads"}),
		Errors: prometheus.NewCounter(prometheus.CounterOpts{Name: "certwatcher_read_certificate_errors_total", Help: "Total number of certificate read errors"}),
	}
}

// Collector exports the expiry of every loaded certificate in c, read at
// scrape time, in operator_certificate_expiry_timestamp_seconds{use}:
// "webhook", "metrics", and "webhook-ca" for a self-issued webhook
// certificate's CA. One not loaded has no series: an alert would take a
// zero for long expired.
func (c Certificates) Collector() prometheus.Collector { return expiry{c} }

var expiryDesc = prometheus.NewDesc("operator_certificate_expiry_timestamp_seconds",
	"Expiry (NotAfter) of a certificate the operator serves, in Unix seconds, by use.", []string{"use"}, nil)

type expiry struct{ certs Certificates }

func (expiry) Describe(ch chan<- *prometheus.Desc) { ch <- expiryDesc }

func (e expiry) Collect(ch chan<- prometheus.Metric) {
	send := func(use string, c *x509.Certificate) {
		if c != nil {
			ch <- prometheus.MustNewConstMetric(expiryDesc, prometheus.GaugeValue, float64(c.NotAfter.Unix()), use)
		}
	}
	for use, s := range map[string]Source{"webhook": e.certs.Webhook, "metrics": e.certs.Metrics} {
		if s == nil {
			continue
		}
		if cert, err := s.GetCertificate(&tls.ClientHelloInfo{}); err == nil {
			send(use, cert.Leaf)
		}
		if self, ok := s.(*SelfIssued); ok {
			send(use+"-ca", self.ca.Load())
		}
	}
}
