package webhook

import (
	"net/http"
)

// OpenConns counts the connections the server tracks.
func OpenConns(s *Server) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

// Handler is what the server serves, without TLS or a listener: for
// benchmarks of a request's own cost.
func (s *Server) Handler() http.Handler { return http.HandlerFunc(s.serveHTTP) }
