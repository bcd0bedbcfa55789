package certs_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/hexagonal-operator/operator/internal/adapters/certs"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// client-go's and klog's background workers, alive for the whole
		// process once the integration tests started them.
		goleak.IgnoreTopFunction("k8s.io/klog/v2.(*flushDaemon).run.func1"),
		goleak.IgnoreAnyFunction("k8s.io/client-go/util/workqueue.(*Typed[...]).updateUnfinishedWorkLoop"),
		goleak.IgnoreAnyFunction("k8s.io/client-go/util/workqueue.(*delayingType[...]).waitingLoop"),
	)
}

func issue(t testing.TB, ca *certs.TestCA, validity time.Duration) certs.TestPair {
	t.Helper()
	pair, err := ca.Issue(validity, "127.0.0.1", "localhost")
	require.NoError(t, err)
	return pair
}

// writePair replaces the files the way a Secret volume does: new files,
// then an atomic rename, so a reader never sees half a file.
func writePair(t testing.TB, dir string, p certs.TestPair) {
	t.Helper()
	for name, data := range map[string][]byte{"tls.crt": p.CertPEM, "tls.key": p.KeyPEM} {
		tmp := filepath.Join(dir, "."+name+".tmp")
		require.NoError(t, os.WriteFile(tmp, data, 0o600))
		require.NoError(t, os.Rename(tmp, filepath.Join(dir, name)))
	}
}

func served(t testing.TB, s certs.Source) *x509.Certificate {
	t.Helper()
	c, err := s.GetCertificate(&tls.ClientHelloInfo{})
	require.NoError(t, err)
	leaf, err := x509.ParseCertificate(c.Certificate[0])
	require.NoError(t, err)
	return leaf
}

func startFiles(t testing.TB, files certs.Files, reads certs.Reads, log *zap.Logger) (*certs.FileSource, error) {
	t.Helper()
	src, err := certs.NewFileSource("webhook", files, 10*time.Millisecond, reads, log)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, src.Stop(context.Background())) })
	return src, src.Start(context.Background())
}

// The source swaps in a changed pair, keeps serving the last good one while
// the files are broken (reporting each bad content once), and counts every
// read and every failed one in certwatcher's counters.
func TestFileSourceReloadsAndCountsItsReads(t *testing.T) {
	t.Parallel()
	ca, err := certs.NewTestCA()
	require.NoError(t, err)
	dir := t.TempDir()
	first := issue(t, ca, time.Hour)
	writePair(t, dir, first)
	reads := certs.NewReads()
	core, logs := observer.New(zapcore.InfoLevel)
	src, err := startFiles(t, certs.Files{Dir: dir}, reads, zap.New(core))
	require.NoError(t, err)
	firstLeaf := served(t, src)
	assert.GreaterOrEqual(t, testutil.ToFloat64(reads.Total), 1.0)
	assert.Zero(t, testutil.ToFloat64(reads.Errors))
	assert.Equal(t, 1, logs.FilterMessage("webhook certificate loaded").Len())

	second := issue(t, ca, 2*time.Hour)
	writePair(t, dir, second)
	require.Eventually(t, func() bool { return !served(t, src).Equal(firstLeaf) }, 5*time.Second, 10*time.Millisecond)
	secondLeaf := served(t, src)
	assert.Equal(t, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: secondLeaf.Raw}), second.CertPEM)
	assert.Zero(t, testutil.ToFloat64(reads.Errors))

	// A broken certificate file: every read of it fails and is counted,
	// the failure is reported once, the previous pair keeps being served.
	// Written aside and renamed, so that no read sees it half-written.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "broken"), []byte("not a certificate"), 0o600))
	require.NoError(t, os.Rename(filepath.Join(dir, "broken"), filepath.Join(dir, "tls.crt")))
	require.Eventually(t, func() bool { return testutil.ToFloat64(reads.Errors) >= 3 }, 5*time.Second, 10*time.Millisecond)
	assert.Greater(t, testutil.ToFloat64(reads.Total), testutil.ToFloat64(reads.Errors))
	assert.True(t, served(t, src).Equal(secondLeaf))
	assert.Equal(t, 1, logs.FilterMessage("webhook certificate reload failed, serving the previous one").Len())
}

func TestFileSourceStartFailsWithoutAGoodPair(t *testing.T) {
	t.Parallel()
	ca, err := certs.NewTestCA()
	require.NoError(t, err)
	a, b := issue(t, ca, time.Hour), issue(t, ca, time.Hour)
	tests := []struct {
		name    string
		files   map[string][]byte
		wantErr string
	}{
		{name: "no files", wantErr: "open DIR/tls.crt: no such file or directory"},
		{name: "no key", files: map[string][]byte{"tls.crt": a.CertPEM}, wantErr: "open DIR/tls.key: no such file or directory"},
		{name: "mismatched pair", files: map[string][]byte{"tls.crt": a.CertPEM, "tls.key": b.KeyPEM}, wantErr: "private key does not match public key"},
		{name: "garbage", files: map[string][]byte{"tls.crt": []byte("nope"), "tls.key": []byte("nope")}, wantErr: "DIR/tls.crt and DIR/tls.key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			for name, data := range tt.files {
				require.NoError(t, os.WriteFile(filepath.Join(dir, name), data, 0o600))
			}
			reads := certs.NewReads()
			src, err := startFiles(t, certs.Files{Dir: dir}, reads, zap.NewNop())
			require.ErrorContains(t, err, strings.ReplaceAll(tt.wantErr, "DIR", dir))
			assert.Equal(t, 1.0, testutil.ToFloat64(reads.Errors))
			_, err = src.GetCertificate(&tls.ClientHelloInfo{})
			require.ErrorContains(t, err, "no certificate loaded from "+dir)
		})
	}
}

// --webhook-cert-name/-key and --metrics-cert-name/-key name other files.
func TestFileSourceOtherFileNames(t *testing.T) {
	t.Parallel()
	ca, err := certs.NewTestCA()
	require.NoError(t, err)
	pair := issue(t, ca, time.Hour)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "metrics.pem"), pair.CertPEM, 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "metrics-key.pem"), pair.KeyPEM, 0o600))

	_, err = startFiles(t, certs.Files{Dir: dir}, certs.NewReads(), zap.NewNop())
	require.ErrorContains(t, err, "tls.crt")
	src, err := startFiles(t, certs.Files{Dir: dir, CertName: "metrics.pem", KeyName: "metrics-key.pem"}, certs.NewReads(), zap.NewNop())
	require.NoError(t, err)
	assert.Equal(t, pair.CertPEM, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: served(t, src).Raw}))
}

func TestNewFileSourceRejectsBadArguments(t *testing.T) {
	t.Parallel()
	_, err := certs.NewFileSource("metrics", certs.Files{}, 0, certs.NewReads(), zap.NewNop())
	require.ErrorContains(t, err, "metrics certificate: no certificate folder")
	_, err = certs.NewFileSource("metrics", certs.Files{Dir: "x"}, -time.Second, certs.NewReads(), zap.NewNop())
	require.ErrorContains(t, err, "negative poll interval")
	_, err = certs.NewFileSource("metrics", certs.Files{Dir: "x"}, 0, certs.Reads{}, zap.NewNop())
	require.Error(t, err)
}

func TestSelfSigned(t *testing.T) {
	t.Parallel()
	var s certs.SelfSigned
	_, err := s.GetCertificate(&tls.ClientHelloInfo{})
	require.Error(t, err, "nothing before Start")
	require.NoError(t, s.Start(context.Background()))
	leaf := served(t, &s)
	assert.Contains(t, leaf.DNSNames, "localhost")
	assert.True(t, leaf.NotAfter.After(time.Now().AddDate(0, 11, 0)))
	require.NoError(t, s.Stop(context.Background()))
}
