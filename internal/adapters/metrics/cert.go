package metrics

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/hexagonal-operator/operator/internal/certreads"
)

// Default names of the files looked for in Options.CertDir, as
// cert-manager and controller-runtime name them.
const (
	CertFileName = "tls.crt"
	KeyFileName  = "tls.key"
)

// selfSignedCert makes a serving certificate that lives only in memory, as
// controller-runtime's metrics server does when it is given no
// certificate: the connection is encrypted, and callers (Prometheus with
// insecure_skip_verify, or a ServiceMonitor without a CA) authenticate
// themselves with a token rather than the server with a chain.
func selfSignedCert(now time.Time) (*tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate key: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return nil, fmt.Errorf("generate serial: %w", err)
	}
	dns := []string{"localhost"}
	if h, err := os.Hostname(); err == nil && h != "" {
		dns = append(dns, h)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "hexagonal-operator-metrics"},
		NotBefore:             now.Add(-time.Hour), // tolerate clock skew
		NotAfter:              now.AddDate(1, 0, 0),
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		DNSNames:              dns,
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("create certificate: %w", err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("parse certificate: %w", err)
	}
	return &tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, nil
}

// fileCert serves tls.crt/tls.key from a folder and picks up replaced files
// (cert-manager renews them in place) without a restart. Looking is cheap —
// two stats, at most every checkEvery, on a handshake — so no watcher
// goroutine is needed.
type fileCert struct {
	certPath, keyPath string
	checkEvery        time.Duration
	now               func() time.Time
	log               *zap.Logger
	reads             certreads.Counters

	mu                sync.Mutex // guards what follows
	cert              *tls.Certificate
	checked           time.Time
	certMod, keyMod   time.Time
	certSize, keySize int64
}

func newFileCert(dir, certName, keyName string, checkEvery time.Duration, now func() time.Time, log *zap.Logger, reads certreads.Counters) *fileCert {
	if certName == "" {
		certName = CertFileName
	}
	if keyName == "" {
		keyName = KeyFileName
	}
	return &fileCert{
		certPath:   filepath.Join(dir, certName),
		keyPath:    filepath.Join(dir, keyName),
		checkEvery: checkEvery,
		now:        now,
		log:        log,
		reads:      reads,
	}
}

// load reads the pair; it is called once at Start so that a missing or
// broken certificate fails the start rather than every handshake.
func (c *fileCert) load() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.loadLocked()
}

func (c *fileCert) loadLocked() error {
	// Counted as controller-runtime's certwatcher counts its reads.
	c.reads.Total.Inc()
	ci, err := os.Stat(c.certPath)
	if err != nil {
		c.reads.Errors.Inc()
		return fmt.Errorf("metrics certificate: %w", err)
	}
	ki, err := os.Stat(c.keyPath)
	if err != nil {
		c.reads.Errors.Inc()
		return fmt.Errorf("metrics certificate key: %w", err)
	}
	cert, err := tls.LoadX509KeyPair(c.certPath, c.keyPath)
	if err != nil {
		c.reads.Errors.Inc()
		return fmt.Errorf("metrics certificate %s: %w", c.certPath, err)
	}
	c.cert = &cert
	c.checked = c.now()
	c.certMod, c.keyMod = ci.ModTime(), ki.ModTime()
	c.certSize, c.keySize = ci.Size(), ki.Size()
	return nil
}

// GetCertificate fits tls.Config.GetCertificate.
func (c *fileCert) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cert == nil {
		return nil, errors.New("metrics certificate not loaded")
	}
	now := c.now()
	if now.Sub(c.checked) < c.checkEvery {
		return c.cert, nil
	}
	c.checked = now
	ci, cerr := os.Stat(c.certPath)
	ki, kerr := os.Stat(c.keyPath)
	if cerr != nil || kerr != nil {
		// Mid-rotation the files can be briefly absent: keep serving the
		// old pair.
		return c.cert, nil
	}
	if ci.ModTime().Equal(c.certMod) && ki.ModTime().Equal(c.keyMod) && ci.Size() == c.certSize && ki.Size() == c.keySize {
		return c.cert, nil
	}
	old := c.cert
	if err := c.loadLocked(); err != nil {
		c.cert = old
		c.log.Error("metrics certificate reload failed, serving the previous one", zap.Error(err))
		return old, nil
	}
	c.log.Info("metrics certificate reloaded", zap.String("path", c.certPath))
	return c.cert, nil
}
