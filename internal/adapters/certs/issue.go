package certs

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"sync/atomic"
	"time"

	"k8s.io/client-go/util/cert"
)

// keyPair is a certificate with its private key, parsed and in PEM.
type keyPair struct {
	cert    *x509.Certificate
	key     crypto.Signer
	certPEM []byte
	keyPEM  []byte
}

// backdate moves NotBefore into the past for verifiers whose clock is
// a little behind.
func backdate(validity time.Duration) time.Duration {
	return min(5*time.Minute, validity/10)
}

func newCA(commonName string, validity time.Duration, now time.Time) (*keyPair, error) {
	tmpl := &x509.Certificate{
		Subject:               pkix.Name{CommonName: commonName},
		NotBefore:             now.Add(-backdate(validity)),
		NotAfter:              now.Add(validity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	return issue(tmpl, nil)
}

// issueServing signs a serving certificate for hosts (DNS names or IPs).
func (ca *keyPair) issueServing(hosts []string, validity time.Duration, now time.Time) (*keyPair, error) {
	tmpl := &x509.Certificate{
		Subject:     pkix.Name{CommonName: hosts[0]},
		NotBefore:   now.Add(-backdate(validity)),
		NotAfter:    now.Add(validity),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	if tmpl.NotAfter.After(ca.cert.NotAfter) {
		tmpl.NotAfter = ca.cert.NotAfter
	}
	return issue(tmpl, ca)
}

// SelfSigned is a certificate made in memory at Start, as
// controller-runtime's metrics server does when it is given none.
type SelfSigned struct {
	cert atomic.Pointer[tls.Certificate]
}

// Start makes the certificate.
func (s *SelfSigned) Start(context.Context) error {
	now := time.Now()
	dns := []string{"localhost"}
	if h, err := os.Hostname(); err == nil && h != "" {
		dns = append(dns, h)
	}
	kp, err := issue(&x509.Certificate{
		Subject:               pkix.Name{CommonName: "hexagonal-operator-metrics"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.AddDate(1, 0, 0),
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		DNSNames:              dns,
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}, nil)
	if err != nil {
		return err
	}
	s.cert.Store(&tls.Certificate{Certificate: [][]byte{kp.cert.Raw}, PrivateKey: kp.key, Leaf: kp.cert})
	return nil
}

// Stop does nothing.
func (*SelfSigned) Stop(context.Context) error { return nil }

// GetCertificate returns the certificate made at Start.
func (s *SelfSigned) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	if c := s.cert.Load(); c != nil {
		return c, nil
	}
	return nil, errors.New("self-signed certificate not made yet")
}

// issue creates a key and signs tmpl with parent (self-signed when nil).
func issue(tmpl *x509.Certificate, parent *keyPair) (*keyPair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate key: %w", err)
	}
	if tmpl.SerialNumber, err = rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127)); err != nil {
		return nil, fmt.Errorf("generate serial number: %w", err)
	}
	signerCert, signerKey := tmpl, crypto.Signer(key)
	if parent != nil {
		signerCert, signerKey = parent.cert, parent.key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, signerCert, key.Public(), signerKey)
	if err != nil {
		return nil, fmt.Errorf("sign certificate %q: %w", tmpl.Subject.CommonName, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("parse certificate: %w", err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("encode key: %w", err)
	}
	return &keyPair{
		cert:    cert,
		key:     key,
		certPEM: pemCert(cert),
		keyPEM:  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}),
	}, nil
}

// parseKeyPair reads a PEM certificate (the first of a bundle) and key.
func parseKeyPair(certPEM, keyPEM []byte) (*keyPair, error) {
	certs, err := cert.ParseCertsPEM(certPEM)
	if err != nil {
		return nil, err
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM) // its keys are all crypto.Signers
	if err != nil {
		return nil, err
	}
	return &keyPair{cert: certs[0], key: pair.PrivateKey.(crypto.Signer), certPEM: pemCert(certs[0]), keyPEM: keyPEM}, nil
}

func pemCert(c *x509.Certificate) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: cert.CertificateBlockType, Bytes: c.Raw})
}
