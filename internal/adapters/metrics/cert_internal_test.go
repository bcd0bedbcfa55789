package metrics

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zaptest"

	"github.com/hexagonal-operator/operator/internal/certreads"
)

// writePair writes a fresh self-signed pair into dir and returns its leaf.
func writePair(t *testing.T, dir string, mod time.Time) *x509.Certificate {
	t.Helper()
	cert, err := selfSignedCert(time.Now())
	require.NoError(t, err)
	keyDER, err := x509.MarshalPKCS8PrivateKey(cert.PrivateKey)
	require.NoError(t, err)
	certPath, keyPath := filepath.Join(dir, CertFileName), filepath.Join(dir, KeyFileName)
	require.NoError(t, os.WriteFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Certificate[0]}), 0o600))
	require.NoError(t, os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600))
	require.NoError(t, os.Chtimes(certPath, mod, mod))
	require.NoError(t, os.Chtimes(keyPath, mod, mod))
	return cert.Leaf
}

type fakeNow struct {
	mu sync.Mutex
	t  time.Time
}

func (f *fakeNow) now() time.Time { f.mu.Lock(); defer f.mu.Unlock(); return f.t }
func (f *fakeNow) add(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.t = f.t.Add(d)
}

func TestFileCertReloadsChangedFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	base := time.Now().Add(-time.Hour)
	first := writePair(t, dir, base)
	clock := &fakeNow{t: time.Now()}
	reads, err := certreads.Register(prometheus.NewPedanticRegistry())
	require.NoError(t, err)
	fc := newFileCert(dir, "", "", 10*time.Second, clock.now, zaptest.NewLogger(t), reads)
	require.NoError(t, fc.load())
	assert.Equal(t, 1.0, testutil.ToFloat64(reads.Total))

	served := func() *x509.Certificate {
		c, err := fc.GetCertificate(&tls.ClientHelloInfo{})
		require.NoError(t, err)
		leaf, err := x509.ParseCertificate(c.Certificate[0])
		require.NoError(t, err)
		return leaf
	}
	assert.Equal(t, first.SerialNumber, served().SerialNumber)

	second := writePair(t, dir, base.Add(time.Minute))
	// Not looked at again before the check interval.
	assert.Equal(t, first.SerialNumber, served().SerialNumber)
	clock.add(11 * time.Second)
	assert.Equal(t, second.SerialNumber, served().SerialNumber)
	assert.Equal(t, 2.0, testutil.ToFloat64(reads.Total))
	assert.Zero(t, testutil.ToFloat64(reads.Errors))

	// A broken replacement keeps the last good pair, and is counted.
	require.NoError(t, os.WriteFile(filepath.Join(dir, CertFileName), []byte("garbage"), 0o600))
	clock.add(11 * time.Second)
	assert.Equal(t, second.SerialNumber, served().SerialNumber)
	assert.Equal(t, 3.0, testutil.ToFloat64(reads.Total))
	assert.Equal(t, 1.0, testutil.ToFloat64(reads.Errors))
}

// The webhook server registers the same counters on the same registry:
// both count into one series.
func TestCertReadCountersAreShared(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewPedanticRegistry()
	a, err := certreads.Register(reg)
	require.NoError(t, err)
	b, err := certreads.Register(reg)
	require.NoError(t, err)
	a.Total.Inc()
	b.Total.Inc()
	b.Errors.Inc()
	assert.Equal(t, 2.0, testutil.ToFloat64(a.Total))
	assert.Equal(t, 1.0, testutil.ToFloat64(a.Errors))
	n, err := testutil.GatherAndCount(reg, "certwatcher_read_certificate_total", "certwatcher_read_certificate_errors_total")
	require.NoError(t, err)
	assert.Equal(t, 2, n)
}

func TestFileCertMissingFilesFailLoad(t *testing.T) {
	t.Parallel()
	reads := certreads.New()
	fc := newFileCert(t.TempDir(), "", "", time.Second, time.Now, zaptest.NewLogger(t), reads)
	err := fc.load()
	require.Error(t, err)
	assert.Contains(t, err.Error(), CertFileName)
	assert.Equal(t, 1.0, testutil.ToFloat64(reads.Errors))
}

// --metrics-cert-name and --metrics-cert-key name other files in the folder.
func TestFileCertOtherFileNames(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	leaf := writePair(t, dir, time.Now())
	require.NoError(t, os.Rename(filepath.Join(dir, CertFileName), filepath.Join(dir, "metrics.pem")))
	require.NoError(t, os.Rename(filepath.Join(dir, KeyFileName), filepath.Join(dir, "metrics-key.pem")))

	require.ErrorContains(t, newFileCert(dir, "", "", time.Second, time.Now, zaptest.NewLogger(t), certreads.New()).load(), CertFileName)
	fc := newFileCert(dir, "metrics.pem", "metrics-key.pem", time.Second, time.Now, zaptest.NewLogger(t), certreads.New())
	require.NoError(t, fc.load())
	c, err := fc.GetCertificate(&tls.ClientHelloInfo{})
	require.NoError(t, err)
	served, err := x509.ParseCertificate(c.Certificate[0])
	require.NoError(t, err)
	assert.Equal(t, leaf.SerialNumber, served.SerialNumber)
}
