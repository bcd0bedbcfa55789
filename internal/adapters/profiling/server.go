package profiling

import (
	"cmp"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"go.uber.org/zap"

	"github.com/hexagonal-operator/operator/internal/httpserve"
)

// DisabledBindAddress turns the server off; it is also the default.
const DisabledBindAddress = "0"

// Options configure the profile [Server]. The zero value is off.
type Options struct {
	// BindAddress is host:port to listen on; empty or "0" disables the
	// server, ":0" picks a free port.
	BindAddress string
}

// Server serves the runtime profiles over plain HTTP.
type Server struct {
	opts    Options
	log     *zap.Logger
	handler http.Handler
	http    *httpserve.Server
}

// New returns a profile server. It does no I/O.
func New(opts Options, log *zap.Logger) (*Server, error) {
	opts.BindAddress = cmp.Or(opts.BindAddress, DisabledBindAddress)
	if log == nil {
		log = zap.NewNop()
	}
	if opts.BindAddress != DisabledBindAddress {
		if _, _, err := net.SplitHostPort(opts.BindAddress); err != nil {
			return nil, fmt.Errorf("profiling server: bind address %q: %w", opts.BindAddress, err)
		}
	}
	// Index serves every named profile (heap, goroutine, ...) under its
	// path; the other four are handlers of their own.
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return &Server{opts: opts, log: log, handler: mux, http: httpserve.New("profiling server", log)}, nil
}

// Handler serves the profiles; it is what the server listens with.
func (s *Server) Handler() http.Handler { return s.handler }

// Disabled reports whether the bind address turned the server off.
func (s *Server) Disabled() bool { return s.opts.BindAddress == DisabledBindAddress }

// Start listens (so a taken port fails Start) and serves in the background.
func (s *Server) Start(context.Context) error {
	if s.Disabled() {
		return nil
	}
	// No write timeout: a CPU profile or a trace answers after the seconds
	// it was asked for.
	srv := &http.Server{Handler: s.handler, ReadHeaderTimeout: 10 * time.Second, ErrorLog: zap.NewStdLog(s.log)}
	if err := s.http.Start(s.opts.BindAddress, srv, false); err != nil {
		return err
	}
	s.log.Info("serving profiles", zap.String("address", s.http.Addr().String()))
	return nil
}

// Addr is the address the server listens on once started, nil before.
func (s *Server) Addr() net.Addr { return s.http.Addr() }

// Stop finishes in-flight requests and closes the listener, or gives up
// when ctx ends: a CPU profile being taken is cut short then.
func (s *Server) Stop(ctx context.Context) error { return s.http.Stop(ctx) }
