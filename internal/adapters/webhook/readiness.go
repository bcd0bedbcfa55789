package webhook

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"
)

// ReadinessCheck reports ready once the server completes a TLS handshake
// on its own port with a certificate that is valid now.
func (s *Server) ReadinessCheck() Readiness { return Readiness{s: s} }

// Readiness is the webhook server's readiness check.
type Readiness struct{ s *Server }

// Name is "webhook".
func (Readiness) Name() string { return "webhook" }

// Check completes a TLS handshake with the server's own port.
func (r Readiness) Check(ctx context.Context) error {
	addr := r.s.Addr()
	if addr == nil {
		return errors.New("webhook server not started")
	}
	host := addr.IP
	if host.IsUnspecified() {
		host = net.IPv4(127, 0, 0, 1)
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	d := tls.Dialer{Config: &tls.Config{
		MinVersion: tls.VersionTLS12,
		// Which CA signed it is the API server's business (caBundle).
		InsecureSkipVerify: true, //nolint:gosec // a self-check of the certificate's dates
	}}
	conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort(host.String(), strconv.Itoa(addr.Port)))
	if err != nil {
		return fmt.Errorf("webhook server TLS handshake: %w", err)
	}
	defer func() { _ = conn.Close() }()
	leaf, now := conn.(*tls.Conn).ConnectionState().PeerCertificates[0], time.Now()
	if now.Before(leaf.NotBefore) || now.After(leaf.NotAfter) {
		return fmt.Errorf("webhook certificate is valid from %s to %s, not now", leaf.NotBefore.Format(time.RFC3339), leaf.NotAfter.Format(time.RFC3339))
	}
	return nil
}
