package httpserve

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"go.uber.org/zap"
)

// DisabledAddress is the bind address that turns a server off.
const DisabledAddress = "0"

// Server runs one http.Server. The zero value is not usable; use New.
type Server struct {
	name    string
	address string
	handler http.Handler
	log     *zap.Logger

	mu   sync.Mutex // guards what follows
	srv  *http.Server
	addr net.Addr
	done chan struct{} // closed when the serving goroutine has returned
}

// New returns a server of handler at address (host:port; ":0" picks a free
// port, [DisabledAddress] turns it off) whose errors and logs say name, for
// example "metrics server". It checks the address and does no I/O.
func New(name, address string, handler http.Handler, log *zap.Logger) (*Server, error) {
	if address != DisabledAddress {
		if _, _, err := net.SplitHostPort(address); err != nil {
			return nil, fmt.Errorf("%s: bind address %q: %w", name, address, err)
		}
	}
	if log == nil {
		log = zap.NewNop()
	}
	return &Server{name: name, address: address, handler: handler, log: log}, nil
}

// Disabled reports whether the bind address turned the server off.
func (s *Server) Disabled() bool { return s.address == DisabledAddress }

// Handler is what the server serves.
func (s *Server) Handler() http.Handler { return s.handler }

// Start serves plain HTTP, without a write timeout (a CPU profile answers
// after the seconds it was asked for); see [Server.Serve].
func (s *Server) Start(context.Context) error { return s.Serve(&http.Server{}, false) }

// Serve listens, so that a taken port fails here rather than in a
// background goroutine, and serves the handler with srv's settings in the
// background; withTLS serves srv.TLSConfig's certificates. fields join the
// log line. It does nothing when disabled and fails when started already.
func (s *Server) Serve(srv *http.Server, withTLS bool, fields ...zap.Field) error {
	if s.Disabled() {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.srv != nil {
		return fmt.Errorf("%s: already started", s.name)
	}
	ln, err := net.Listen("tcp", s.address)
	if err != nil {
		return fmt.Errorf("%s: listen on %s: %w", s.name, s.address, err)
	}
	srv.Handler, srv.ErrorLog = s.handler, zap.NewStdLog(s.log)
	srv.ReadHeaderTimeout = cmp.Or(srv.ReadHeaderTimeout, 10*time.Second)
	s.srv, s.addr, s.done = srv, ln.Addr(), make(chan struct{})
	go func(done chan struct{}) {
		defer close(done)
		var err error
		if withTLS {
			err = srv.ServeTLS(ln, "", "")
		} else {
			err = srv.Serve(ln)
		}
		if err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("server stopped serving", zap.String("server", s.name), zap.Error(err))
		}
	}(s.done)
	s.log.Info("serving", append(fields, zap.String("server", s.name), zap.Stringer("address", s.addr))...)
	return nil
}

// Addr is the bound address once started (useful with ":0"), nil before.
func (s *Server) Addr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addr
}

// Stop finishes in-flight requests and closes the listener, or closes every
// connection and returns an error when ctx ends first. Stop before Start is
// a no-op.
func (s *Server) Stop(ctx context.Context) error {
	s.mu.Lock()
	srv, done := s.srv, s.done
	s.mu.Unlock()
	if srv == nil {
		return nil
	}
	if err := srv.Shutdown(ctx); err != nil {
		_ = srv.Close()
		return fmt.Errorf("%s: shutdown: %w", s.name, err)
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("%s: shutdown: %w", s.name, ctx.Err())
	}
}
