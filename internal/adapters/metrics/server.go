package metrics

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
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
	opts     Options
	gatherer prometheus.Gatherer
	log      *zap.Logger
	auth     *authFilter
	certs    CertSource
	http     *httpserve.Server
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
	s := &Server{opts: opts, gatherer: gatherer, log: log, certs: certs, http: httpserve.New("metrics server", log)}
	if s.Disabled() {
		return s, nil
	}
	if _, _, err := net.SplitHostPort(opts.BindAddress); err != nil {
		return nil, fmt.Errorf("metrics server: bind address %q: %w", opts.BindAddress, err)
	}
	if opts.Secure {
		if client == nil || certs == nil {
			return nil, errors.New("metrics server: secure mode needs a certificate, and a Kubernetes client for TokenReview and SubjectAccessReview")
		}
		s.auth = newAuthFilter(client, log, time.Now)
	}
	return s, nil
}

// Disabled reports whether the bind address turned the server off.
func (s *Server) Disabled() bool { return s.opts.BindAddress == "0" }

// Handler is the HTTP handler the server serves, authentication included in
// secure mode.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(s.gatherer, promhttp.HandlerOpts{
		ErrorHandling: promhttp.HTTPErrorOnError,
		ErrorLog:      zap.NewStdLog(s.log),
	}))
	if s.auth != nil {
		return s.auth.wrap(mux)
	}
	return mux
}

// Start listens (so a taken port fails Start) and serves in the background.
func (s *Server) Start(ctx context.Context) error {
	if s.Disabled() {
		return nil
	}
	srv := &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          zap.NewStdLog(s.log),
		Protocols:         new(http.Protocols),
	}
	srv.Protocols.SetHTTP1(true)
	if s.opts.Secure {
		if err := s.certs.Start(ctx); err != nil {
			return fmt.Errorf("metrics server: certificate: %w", err)
		}
		srv.TLSConfig = &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: s.certs.GetCertificate}
		srv.Protocols.SetHTTP2(s.opts.EnableHTTP2)
	}
	if err := s.http.Start(s.opts.BindAddress, srv, s.opts.Secure); err != nil {
		return errors.Join(err, s.stopCerts(ctx))
	}
	s.log.Info("serving metrics", zap.String("address", s.http.Addr().String()), zap.Bool("secure", s.opts.Secure))
	return nil
}

// Addr is the address the server listens on once started (useful with
// ":0"), nil before.
func (s *Server) Addr() net.Addr { return s.http.Addr() }

// Stop finishes in-flight scrapes and closes the listener, or gives up
// when ctx ends, then stops the certificate source.
func (s *Server) Stop(ctx context.Context) error {
	return errors.Join(s.http.Stop(ctx), s.stopCerts(ctx))
}

func (s *Server) stopCerts(ctx context.Context) error {
	if s.opts.Secure && !s.Disabled() {
		return s.certs.Stop(ctx)
	}
	return nil
}
