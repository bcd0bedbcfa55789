package certs

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Source knows how to hand a server its current serving certificate, so
// that the certificate changes (reloaded files, rotation) without a restart
// and without touching open connections.
type Source interface {
	Start(ctx context.Context) error
	Stop(ctx context.Context) error
	// GetCertificate fits tls.Config.GetCertificate: it is called on every
	// handshake, concurrently, and does no I/O. It fails before Start.
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

// Reads are controller-runtime's certwatcher counters: every read of a
// certificate and key pair from files, and those that failed. Every
// [FileSource] of a process counts into the same two, as the servers of a
// controller-runtime manager do.
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

// Collector exports the expiry of every certificate in c that is loaded, in
// operator_certificate_expiry_timestamp_seconds{use}: "webhook", "metrics",
// and "webhook-ca" for the CA that signs a self-issued webhook certificate.
// It reads them at scrape time, so a rotation shows at once; a certificate
// not loaded (yet, or never: a plain-HTTP metrics server) has no series
// rather than a zero an expiry alert would take for long expired.
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

// SelfSigned is a certificate made in memory at Start: the metrics
// server's when it is given no files.
type SelfSigned struct {
	cert atomic.Pointer[tls.Certificate]
}

// Start makes the certificate.
func (s *SelfSigned) Start(context.Context) error {
	c, err := selfSigned(time.Now())
	if err != nil {
		return err
	}
	s.cert.Store(c)
	return nil
}

// Stop does nothing: there is nothing in the background.
func (*SelfSigned) Stop(context.Context) error { return nil }

// GetCertificate returns the certificate made at Start.
func (s *SelfSigned) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	if c := s.cert.Load(); c != nil {
		return c, nil
	}
	return nil, errors.New("self-signed certificate not made yet")
}
