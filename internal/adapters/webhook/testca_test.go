package webhook_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"time"
)

// testPair is a certificate and key in PEM.
type testPair struct{ CertPEM, KeyPEM []byte }

// testCA issues the serving certificates of the tests.
type testCA struct {
	testPair
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

func newTestCA() (*testCA, error) {
	ca := &testCA{}
	p, err := ca.sign(&x509.Certificate{
		Subject: pkix.Name{CommonName: "test-ca"}, NotBefore: time.Now().Add(-time.Minute), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true, IsCA: true,
	})
	if err != nil {
		return nil, err
	}
	block, _ := pem.Decode(p.CertPEM)
	ca.testPair = p
	if ca.cert, err = x509.ParseCertificate(block.Bytes); err != nil {
		return nil, err
	}
	return ca, nil
}

// Issue signs a serving certificate for hosts, valid from now for validity.
func (ca *testCA) Issue(validity time.Duration, hosts ...string) (testPair, error) {
	return ca.IssueAt(time.Now(), validity, hosts...)
}

// IssueAt signs a serving certificate as if issued at now.
func (ca *testCA) IssueAt(now time.Time, validity time.Duration, hosts ...string) (testPair, error) {
	tmpl := &x509.Certificate{
		Subject: pkix.Name{CommonName: hosts[0]}, NotBefore: now.Add(-time.Minute), NotAfter: now.Add(validity),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	return ca.sign(tmpl)
}

// sign makes a key for tmpl and signs it with the CA (itself while the CA
// has no certificate yet).
func (ca *testCA) sign(tmpl *x509.Certificate) (testPair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return testPair{}, err
	}
	if tmpl.SerialNumber, err = rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127)); err != nil {
		return testPair{}, err
	}
	parent, signer := tmpl, key
	if ca.cert != nil {
		parent, signer = ca.cert, ca.key
	} else {
		ca.key = key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, key.Public(), signer)
	if err != nil {
		return testPair{}, err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return testPair{}, err
	}
	return testPair{
		CertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		KeyPEM:  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}),
	}, nil
}
