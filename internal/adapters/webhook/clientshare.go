package webhook

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/util/cache"
	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/utils/clock"
)

const (
	// handshakeBurst and handshakeRate bound how fast one client address
	// may open connections, each of which costs the server a TLS
	// handshake (a key exchange and a signature). The API server keeps
	// its connections alive, but opens one per call beyond the 25 it
	// keeps idle, so a burst of admission calls after a restart needs a
	// burst of handshakes: an address may open half the request slots'
	// worth at once, then 64 a second.
	handshakeBurst = 256
	handshakeRate  = 64
	// handshakeAddresses bounds the addresses whose rate is remembered.
	// One is forgotten once its bucket has filled again, which loses
	// nothing, or when more addresses than this connected since: each of
	// those could as well have been another address with a full bucket.
	handshakeAddresses = 4096
)

// Values of the label reason of operator_webhook_connections_rejected_total.
const (
	rejectedConnections       = "connections"
	rejectedClientConnections = "client_connections"
	rejectedHandshakeRate     = "handshake_rate"
)

var rejectedConnReasons = []string{rejectedConnections, rejectedClientConnections, rejectedHandshakeRate}

// clientAddr is the client address of a "host:port", the key of its share
// of the budget: an IPv4 address mapped into IPv6 is the IPv4 address, and
// one that cannot be read the zero Addr.
func clientAddr(hostPort string) netip.Addr {
	ap, err := netip.ParseAddrPort(hostPort)
	if err != nil {
		return netip.Addr{}
	}
	return ap.Addr().Unmap()
}

// handshakes holds each client address to a token bucket of new
// connections. It is checked at accept, before any TLS is spent: how many
// handshakes of an address are in flight at once is then bounded by the
// burst, the rate and the handshake timeout, and by its fair share of
// connections, whose handshaking ones are the first given up.
type handshakes struct {
	clock clock.Clock

	mu      sync.Mutex
	buckets *cache.LRUExpireCache // of flowcontrol.RateLimiter by netip.Addr
}

func newHandshakes(c clock.Clock) *handshakes {
	return &handshakes{clock: c, buckets: cache.NewLRUExpireCacheWithClock(handshakeAddresses, c)}
}

// allow takes a token of client's bucket, false when it is empty. A
// connection later refused for its share has still spent it: an address
// that dials past its share only slows its own handshakes.
func (h *handshakes) allow(client netip.Addr) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	var bucket flowcontrol.RateLimiter
	if v, ok := h.buckets.Get(client); ok {
		bucket = v.(flowcontrol.RateLimiter)
	} else {
		bucket = flowcontrol.NewTokenBucketRateLimiterWithClock(handshakeRate, handshakeBurst, h.clock)
	}
	// Kept until the bucket has filled again after this token.
	h.buckets.Add(client, bucket, time.Duration(handshakeBurst)*time.Second/handshakeRate)
	return bucket.TryAccept()
}

// shareListener holds each client address to its handshake rate and its
// fair share of connections (budget.connect), giving up another address's
// connection when the server is full and this one's address is below its
// share. A connection refused is reset as soon as it is accepted, before
// a TLS handshake is spent on it; a reset rather than a close leaves no
// TIME_WAIT behind. The call it carried fails (the API server does not
// retry an admission call) and its webhook's failurePolicy decides.
type shareListener struct {
	net.Listener
	budget     *budget
	handshakes *handshakes
	refused    *prometheus.CounterVec // by reason
}

// Accept returns the next connection within its client's rate and share.
func (l *shareListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		client := clientAddr(c.RemoteAddr().String())
		if !l.handshakes.allow(client) {
			l.refuse(c, rejectedHandshakeRate)
			continue
		}
		sc := &shareConn{Conn: c, budget: l.budget, client: client}
		switch err := l.budget.connect(sc); {
		case err == nil:
			return sc, nil
		case errors.Is(err, errConnShareTaken):
			l.refuse(c, rejectedClientConnections)
		default:
			l.refuse(c, rejectedConnections)
		}
	}
}

func (l *shareListener) refuse(c net.Conn, reason string) {
	l.refused.WithLabelValues(reason).Inc()
	resetConn(c)
}

// resetConn closes c with a reset.
func resetConn(c net.Conn) {
	if tcp, ok := c.(*net.TCPConn); ok {
		_ = tcp.SetLinger(0)
	}
	_ = c.Close()
}

// shareConn is a connection the budget counts: it gives it back on Close,
// and is reset when the budget gives it up for another address.
type shareConn struct {
	net.Conn
	budget *budget
	client netip.Addr

	// Guarded by budget.mu.
	age      uint64
	requests int  // requests it carries that hold a slot
	released bool // its connection is given back
	evicted  bool // given up for another address
}

func (c *shareConn) Close() error {
	err := c.Conn.Close()
	c.budget.disconnect(c)
	return err
}

// reset closes the connection under whatever reads or writes it, so that
// a request it carries fails at once and gives back what it held.
func (c *shareConn) reset() { resetConn(c.Conn) }

// connKey is the context key of a request's connection.
type connKey struct{}

// withConn is http.Server.ConnContext: it makes a request's shareConn
// known to its lease, so that the budget can give the request up.
func withConn(ctx context.Context, c net.Conn) context.Context {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	if sc, ok := c.(*shareConn); ok {
		return context.WithValue(ctx, connKey{}, sc)
	}
	return ctx
}

// connOf is the shareConn a request came on, nil when none.
func connOf(ctx context.Context) *shareConn {
	sc, _ := ctx.Value(connKey{}).(*shareConn)
	return sc
}
