package httpserve

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"

	"go.uber.org/zap"
)

// Server runs one http.Server. The zero value is not usable; use New.
type Server struct {
	name string
	log  *zap.Logger

	mu   sync.Mutex // guards what follows
	srv  *http.Server
	addr net.Addr
	done chan struct{} // closed when the serving goroutine has returned
}

// New returns a Server whose errors and logs say name (for example
// "metrics server").
func New(name string, log *zap.Logger) *Server {
	return &Server{name: name, log: log}
}

// Start listens on address and serves srv in the background; with TLS it
// serves srv.TLSConfig's certificates. It fails when already started or
// when the address cannot be bound.
func (s *Server) Start(address string, srv *http.Server, withTLS bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.srv != nil {
		return fmt.Errorf("%s: already started", s.name)
	}
	ln, err := net.Listen("tcp", address)
	if err != nil {
		return fmt.Errorf("%s: listen on %s: %w", s.name, address, err)
	}
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
