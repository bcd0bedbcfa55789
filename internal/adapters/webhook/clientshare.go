package webhook

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/netip"

	"github.com/prometheus/client_golang/prometheus"
)

// Values of the label reason of operator_webhook_connections_rejected_total.
const (
	rejectedConnections       = "connections"
	rejectedClientConnections = "client_connections"
)

var rejectedConnReasons = []string{rejectedConnections, rejectedClientConnections}

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

// shareListener holds each client address to its fair share of
// connections (budget.connect), giving up another address's
// connection when the server is full and this one's address is below its
// share. A connection refused is reset as soon as it is accepted, before
// a TLS handshake is spent on it; a reset rather than a close leaves no
// TIME_WAIT behind. The call it carried fails (the API server does not
// retry an admission call) and its webhook's failurePolicy decides.
//
// There is no rate of new connections per address: client-go opens one
// for every call beyond the 25 it keeps idle per host, and some it
// dials are never used, so any rate a busy API server could not reach
// would refuse its calls at the next scale up. What handshakes an address
// can have in flight is bounded by its share and the handshake timeout.
type shareListener struct {
	net.Listener
	budget  *budget
	refused *prometheus.CounterVec // by reason
}

// Accept returns the next connection within its client's share.
func (l *shareListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		sc := &shareConn{Conn: c, budget: l.budget, client: clientAddr(c.RemoteAddr().String())}
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
	carried  bool // it has carried a request
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
