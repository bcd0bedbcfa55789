package controlplane

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
)

// ServingCert is a certificate for a local HTTPS server (a webhook server)
// signed by the control plane's CA, which the API server trusts through the
// caBundle that InstallWebhooks writes.
type ServingCert struct {
	CertFile, KeyFile string
	CertPEM, KeyPEM   []byte
}

// TLSConfig is a server tls.Config for the certificate.
func (s ServingCert) TLSConfig() (*tls.Config, error) {
	pair, err := tls.X509KeyPair(s.CertPEM, s.KeyPEM)
	if err != nil {
		return nil, fmt.Errorf("load serving certificate: %w", err)
	}
	return &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}, nil
}

// IssueServingCert writes tls.crt and tls.key into dir (the layout of
// --webhook-cert-dir) for 127.0.0.1, localhost and any extra hosts.
func (cp *ControlPlane) IssueServingCert(dir string, hosts ...string) (ServingCert, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return ServingCert{}, fmt.Errorf("create %s: %w", dir, err)
	}
	kp, err := cp.ca.issue("webhook", nil, append([]string{"127.0.0.1", "localhost"}, hosts...), x509.ExtKeyUsageServerAuth)
	if err != nil {
		return ServingCert{}, err
	}
	certFile, keyFile, err := kp.write(dir, "tls.crt", "tls.key")
	if err != nil {
		return ServingCert{}, err
	}
	return ServingCert{CertFile: certFile, KeyFile: keyFile, CertPEM: kp.CertPEM, KeyPEM: kp.KeyPEM}, nil
}
