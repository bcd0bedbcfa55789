package webhook

import (
	"net/http"
	"time"

	"k8s.io/apimachinery/pkg/util/cache"
	testingclock "k8s.io/utils/clock/testing"
)

// HandshakeBurst is how many connections one address may open at once.
const HandshakeBurst = handshakeBurst

// OpenConns counts the connections the server tracks.
func OpenConns(s *Server) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

// Handler is what the server serves, without TLS or a listener: for
// benchmarks of a request's own cost.
func (s *Server) Handler() http.Handler { return http.HandlerFunc(s.serveHTTP) }

// FreezeHandshakes stops the clock of the server's handshake rate, so
// that no bucket fills while a test dials.
func FreezeHandshakes(s *Server) {
	h := s.handshakes
	c := testingclock.NewFakeClock(time.Now())
	h.mu.Lock()
	defer h.mu.Unlock()
	h.clock, h.buckets = c, cache.NewLRUExpireCacheWithClock(handshakeAddresses, c)
}
