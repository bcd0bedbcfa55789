package metrics

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.uber.org/zap"
	"k8s.io/client-go/kubernetes"

	"github.com/hexagonal-operator/operator/internal/httpserve"
)

// Options configure the metrics [Server]. The zero value serves plain HTTP
// on :8443.
type Options struct {
	// BindAddress is host:port to listen on; empty means ":8443", "0"
	// disables the server, ":0" picks a free port.
	BindAddress string
	// Secure serves HTTPS with TokenReview and SubjectAccessReview; it
	// needs a kubernetes.Interface and a certificate.
	Secure bool
	// EnableHTTP2 also serves HTTP/2 in secure mode, off by default
	// because of HTTP/2 rapid reset (CVE-2023-44487).
	EnableHTTP2 bool
}

// CertSource is the secure server's certificate (internal/adapters/certs
// provides it): started before the server listens, asked on every
// handshake, stopped once the server has stopped.
type CertSource interface {
	Start(ctx context.Context) error
	Stop(ctx context.Context) error
	GetCertificate(hello *tls.ClientHelloInfo) (*tls.Certificate, error)
}

// Server serves the registry's metrics at /metrics.
type Server struct {
	*httpserve.Server
	opts  Options
	certs CertSource
}

// New returns a server for gatherer; certs and client are needed (and
// used) only in secure mode. It does no I/O.
func New(opts Options, certs CertSource, gatherer prometheus.Gatherer, client kubernetes.Interface, log *zap.Logger) (*Server, error) {
	opts.BindAddress = cmp.Or(opts.BindAddress, ":8443")
	if gatherer == nil {
		return nil, errors.New("metrics server: a gatherer is required")
	}
	if log == nil {
		log = zap.NewNop()
	}
	if opts.Secure && opts.BindAddress != httpserve.DisabledAddress && (client == nil || certs == nil) {
		return nil, errors.New("metrics server: secure mode needs a certificate, and a Kubernetes client for TokenReview and SubjectAccessReview")
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(gatherer, promhttp.HandlerOpts{
		ErrorHandling: promhttp.HTTPErrorOnError,
		ErrorLog:      zap.NewStdLog(log),
	}))
	var handler http.Handler = mux
	if opts.Secure {
		handler = newAuthFilter(client, log, time.Now).wrap(mux)
	}
	srv, err := httpserve.New("metrics server", opts.BindAddress, handler, log)
	if err != nil {
		return nil, err
	}
	return &Server{Server: srv, opts: opts, certs: certs}, nil
}

// Start listens (so a taken port fails Start) and serves in the background.
func (s *Server) Start(ctx context.Context) error {
	if s.Disabled() {
		return nil
	}
	srv := &http.Server{Protocols: new(http.Protocols)}
	srv.Protocols.SetHTTP1(true)
	if s.opts.Secure {
		if err := s.certs.Start(ctx); err != nil {
			return fmt.Errorf("metrics server: certificate: %w", err)
		}
		srv.TLSConfig = &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: s.certs.GetCertificate}
		srv.Protocols.SetHTTP2(s.opts.EnableHTTP2)
	}
	if err := s.Serve(srv, s.opts.Secure, zap.Bool("secure", s.opts.Secure)); err != nil {
		return errors.Join(err, s.stopCerts(ctx))
	}
	return nil
}

// Stop finishes in-flight scrapes and closes the listener, or gives up
// when ctx ends, then stops the certificate source.
func (s *Server) Stop(ctx context.Context) error {
	return errors.Join(s.Server.Stop(ctx), s.stopCerts(ctx))
}

func (s *Server) stopCerts(ctx context.Context) error {
	if s.opts.Secure && !s.Disabled() {
		return s.certs.Stop(ctx)
	}
	return nil
}
