package ports

import "crypto/tls"

// CertSource knows how to hand the webhook server its current serving
// certificate, so the certificate can change (reloaded files, rotation)
// without restarting the server or dropping a connection.
type CertSource interface {
	// GetCertificate returns the certificate to present in a TLS handshake.
	// It is called on every handshake, concurrently: it must be cheap and
	// must not do I/O. Its signature fits tls.Config.GetCertificate.
	GetCertificate(hello *tls.ClientHelloInfo) (*tls.Certificate, error)
}
