package webhook

import (
	"net"
	"net/netip"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

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

// shareListener holds each client address to its share of connections
// (budget.connect): one past it is reset as soon as it is accepted, before
// a TLS handshake is spent on it. A reset rather than a close leaves no
// TIME_WAIT behind. The call it carried fails (the API server does not
// retry an admission call) and its webhook's failurePolicy decides.
type shareListener struct {
	net.Listener
	budget  *budget
	refused prometheus.Counter
}

// Accept returns the next connection within its client's share.
func (l *shareListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		client := clientAddr(c.RemoteAddr().String())
		if l.budget.connect(client) {
			return &shareConn{Conn: c, budget: l.budget, client: client}, nil
		}
		l.refused.Inc()
		if tcp, ok := c.(*net.TCPConn); ok {
			_ = tcp.SetLinger(0) // a reset; nothing was read or written
		}
		_ = c.Close()
	}
}

// shareConn gives its client's connection back on its first Close.
type shareConn struct {
	net.Conn
	budget *budget
	client netip.Addr
	closed sync.Once
}

func (c *shareConn) Close() error {
	err := c.Conn.Close()
	c.closed.Do(func() { c.budget.disconnect(c.client) })
	return err
}
