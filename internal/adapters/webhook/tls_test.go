package webhook_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptrace"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/hexagonal-operator/operator/internal/adapters/webhook"
	"github.com/hexagonal-operator/operator/internal/app"
	"github.com/hexagonal-operator/operator/internal/ports"
)

func serial(t testing.TB, p testPair) *big.Int {
	t.Helper()
	block, _ := pem.Decode(p.CertPEM)
	require.NotNil(t, block)
	c, err := x509.ParseCertificate(block.Bytes)
	require.NoError(t, err)
	return c.SerialNumber
}

func dialTLS(f *fixture, cfg *tls.Config) (*tls.Conn, error) {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(f.ca.CertPEM)
	cfg.RootCAs = pool
	d := tls.Dialer{Config: cfg}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := d.DialContext(ctx, "tcp", f.server.Addr().String())
	if err != nil {
		return nil, err
	}
	return conn.(*tls.Conn), nil
}

func TestTLSVersionsAndProtocols(t *testing.T) {
	t.Parallel()
	plain := startFixture(t, podHooks(), nil)
	h2 := startFixture(t, podHooks(), func(o *webhook.Options) { o.EnableHTTP2 = true })

	t.Run("TLS 1.1 is refused", func(t *testing.T) {
		_, err := dialTLS(plain, &tls.Config{MinVersion: tls.VersionTLS10, MaxVersion: tls.VersionTLS11}) //nolint:gosec // the point of the test
		require.ErrorContains(t, err, "protocol version")
	})
	t.Run("TLS 1.2 is accepted", func(t *testing.T) {
		conn, err := dialTLS(plain, &tls.Config{MinVersion: tls.VersionTLS12, MaxVersion: tls.VersionTLS12})
		require.NoError(t, err)
		defer func() { _ = conn.Close() }()
		assert.Equal(t, uint16(tls.VersionTLS12), conn.ConnectionState().Version)
	})
	t.Run("HTTP/2 is not negotiated by default", func(t *testing.T) {
		conn, err := dialTLS(plain, &tls.Config{MinVersion: tls.VersionTLS12, NextProtos: []string{"h2", "http/1.1"}})
		require.NoError(t, err)
		defer func() { _ = conn.Close() }()
		assert.Equal(t, "http/1.1", conn.ConnectionState().NegotiatedProtocol)
	})
	t.Run("HTTP/2 only client is refused by default", func(t *testing.T) {
		conn, err := dialTLS(plain, &tls.Config{MinVersion: tls.VersionTLS12, NextProtos: []string{"h2"}})
		if err == nil {
			defer func() { _ = conn.Close() }()
			assert.NotEqual(t, "h2", conn.ConnectionState().NegotiatedProtocol)
		}
	})
	t.Run("HTTP/2 when enabled", func(t *testing.T) {
		conn, err := dialTLS(h2, &tls.Config{MinVersion: tls.VersionTLS12, NextProtos: []string{"h2", "http/1.1"}})
		require.NoError(t, err)
		defer func() { _ = conn.Close() }()
		assert.Equal(t, "h2", conn.ConnectionState().NegotiatedProtocol)
	})
}

func TestExternalCertificateReload(t *testing.T) {
	t.Parallel()
	f := startFixture(t, podHooks(), nil)
	first, _ := os.ReadFile(filepath.Join(f.dir, "tls.crt"))
	firstSerial := serial(t, testPair{CertPEM: first})

	// A request load runs during every reload; none may fail.
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var sent, failed atomic.Int64
	var failures sync.Map
	for w := range 8 {
		wg.Go(func() {
			client := newClient(f.ca)
			defer client.CloseIdleConnections()
			for i := 0; ctx.Err() == nil; i++ {
				uid := "load-" + strconv.Itoa(w) + "-" + strconv.Itoa(i)
				body := podReview(t, uid, admissionv1.Create, testPod(nil), nil)
				req, err := http.NewRequest(http.MethodPost, f.base+app.PodMutatePath, bytes.NewReader(body))
				if err != nil {
					failed.Add(1)
					continue
				}
				req.Header.Set("Content-Type", "application/json")
				if i%4 == 0 {
					req.Close = true // fresh handshakes too, not only reused connections
				}
				sent.Add(1)
				resp, err := client.Do(req)
				if err != nil {
					failed.Add(1)
					failures.Store(uid, err.Error())
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					failed.Add(1)
					failures.Store(uid, resp.Status)
				}
			}
		})
	}

	// A connection opened before the reload keeps its certificate.
	oldClient := newClient(f.ca)
	defer oldClient.CloseIdleConnections()
	resp := postWith(t, oldClient, f, nil)
	require.Equal(t, 0, firstSerial.Cmp(resp.TLS.PeerCertificates[0].SerialNumber))

	for range 10 {
		// Some load between reloads, so requests meet every switch.
		before := sent.Load()
		require.Eventually(t, func() bool { return sent.Load() >= before+20 }, 30*time.Second, time.Millisecond)
		latest := issue(t, f.ca, time.Hour)
		writePair(t, f.dir, latest)
		want := serial(t, latest)
		require.Eventually(t, func() bool {
			conn, err := dialTLS(f, &tls.Config{MinVersion: tls.VersionTLS12})
			if err != nil {
				return false
			}
			defer func() { _ = conn.Close() }()
			return conn.ConnectionState().PeerCertificates[0].SerialNumber.Cmp(want) == 0
		}, 10*time.Second, 10*time.Millisecond, "new handshakes present the new certificate")
	}
	stop()
	wg.Wait()

	var reused bool
	resp = postWith(t, oldClient, f, &reused)
	assert.True(t, reused, "the old connection is still open")
	assert.Equal(t, 0, firstSerial.Cmp(resp.TLS.PeerCertificates[0].SerialNumber), "and still has the old certificate")

	t.Logf("%d requests during the reloads", sent.Load())
	assert.Positive(t, sent.Load())
	failures.Range(func(k, v any) bool { t.Logf("%s: %s", k, v); return true })
	assert.Zero(t, failed.Load(), "requests failed during reloads")
}

func postWith(t *testing.T, client *http.Client, f *fixture, reused *bool) *http.Response {
	t.Helper()
	body := podReview(t, "pw", admissionv1.Create, testPod(nil), nil)
	ctx := context.Background()
	if reused != nil {
		ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) { *reused = i.Reused }})
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, f.base+app.PodMutatePath, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body) // a drained body lets the connection be reused
	_ = resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	return resp
}

func writeAtomically(t *testing.T, path string, data []byte) {
	t.Helper()
	tmp := path + ".tmp"
	require.NoError(t, os.WriteFile(tmp, data, 0o600))
	require.NoError(t, os.Rename(tmp, path))
}

func TestBadCertificateFilesKeepTheCurrentOne(t *testing.T) {
	t.Parallel()
	f := startFixture(t, podHooks(), nil)
	good, _ := os.ReadFile(filepath.Join(f.dir, "tls.crt"))
	goodSerial := serial(t, testPair{CertPEM: good})
	next := issue(t, f.ca, time.Hour)

	// The key of one pair with the certificate of another, then a missing
	// key: the server keeps presenting the pair it had.
	// Files are replaced whole, as a Secret volume does: a poll must not
	// catch one half written.
	writeAtomically(t, filepath.Join(f.dir, "tls.crt"), next.CertPEM)
	require.Eventually(t, func() bool {
		return len(f.logs.FilterMessage("webhook certificate reload failed, serving the previous one").All()) == 1
	}, 10*time.Second, 10*time.Millisecond)
	require.NoError(t, os.Remove(filepath.Join(f.dir, "tls.key")))
	require.Eventually(t, func() bool {
		return len(f.logs.FilterMessage("webhook certificate reload failed, serving the previous one").All()) == 2
	}, 10*time.Second, 10*time.Millisecond)
	conn, err := dialTLS(f, &tls.Config{MinVersion: tls.VersionTLS12})
	require.NoError(t, err)
	assert.Equal(t, 0, goodSerial.Cmp(conn.ConnectionState().PeerCertificates[0].SerialNumber))
	_ = conn.Close()

	// Once the pair is whole again it is served.
	writeAtomically(t, filepath.Join(f.dir, "tls.key"), next.KeyPEM)
	require.Eventually(t, func() bool {
		conn, err := dialTLS(f, &tls.Config{MinVersion: tls.VersionTLS12})
		if err != nil {
			return false
		}
		defer func() { _ = conn.Close() }()
		return conn.ConnectionState().PeerCertificates[0].SerialNumber.Cmp(serial(t, next)) == 0
	}, 10*time.Second, 10*time.Millisecond)
	assert.Len(t, f.logs.FilterMessage("webhook certificate reload failed, serving the previous one").All(), 2, "each bad content is reported once")
}

func TestStartFailsClearlyWithoutCertificate(t *testing.T) {
	t.Parallel()
	ca, err := newTestCA()
	require.NoError(t, err)
	a, b := issue(t, ca, time.Hour), issue(t, ca, time.Hour)
	tests := []struct {
		name    string
		files   map[string][]byte
		wantErr string
	}{
		{name: "no files", wantErr: "webhook certificate: open DIR/tls.crt: no such file or directory"},
		{name: "no key", files: map[string][]byte{"tls.crt": a.CertPEM}, wantErr: "webhook certificate: open DIR/tls.key: no such file or directory"},
		{name: "mismatched pair", files: map[string][]byte{"tls.crt": a.CertPEM, "tls.key": b.KeyPEM}, wantErr: "webhook certificate: DIR/tls.crt and DIR/tls.key: tls: private key does not match public key"},
		{name: "garbage", files: map[string][]byte{"tls.crt": []byte("nope"), "tls.key": []byte("nope")}, wantErr: "webhook certificate: DIR/tls.crt and DIR/tls.key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			for name, data := range tt.files {
				require.NoError(t, os.WriteFile(filepath.Join(dir, name), data, 0o600))
			}
			// The server refuses to start on files without a good pair.
			srv, err := webhook.New(webhook.Options{Host: "127.0.0.1", Port: webhook.AnyPort}, fileSource(t, dir, time.Second, zap.NewNop()), podHooks(), prometheus.NewRegistry(), zap.NewNop())
			require.NoError(t, err)
			err = srv.Start(context.Background())
			require.Error(t, err)
			assert.Contains(t, err.Error(), strings.ReplaceAll(tt.wantErr, "DIR", dir))
			assert.Nil(t, srv.Addr(), "nothing listens")
			require.NoError(t, srv.Stop(context.Background()))
		})
	}
}

func TestReadiness(t *testing.T) {
	t.Parallel()
	ca, err := newTestCA()
	require.NoError(t, err)
	dir := t.TempDir()
	writePair(t, dir, issue(t, ca, time.Hour))
	srv, err := webhook.New(webhook.Options{Host: "127.0.0.1", Port: webhook.AnyPort}, fileSource(t, dir, 10*time.Millisecond, zap.NewNop()), podHooks(), prometheus.NewRegistry(), zap.NewNop())
	require.NoError(t, err)
	check := srv.ReadinessCheck()
	assert.Equal(t, "webhook", check.Name())
	ctx := context.Background()

	require.ErrorContains(t, check.Check(ctx), "not started")
	require.NoError(t, srv.Start(ctx))
	require.NoError(t, check.Check(ctx))

	// A certificate that has expired makes the server unready.
	writePair(t, dir, expiredPair(t, ca))
	require.Eventually(t, func() bool {
		err := check.Check(ctx)
		return err != nil && strings.Contains(err.Error(), "not now")
	}, 10*time.Second, 10*time.Millisecond)

	writePair(t, dir, issue(t, ca, time.Hour))
	require.Eventually(t, func() bool { return check.Check(ctx) == nil }, 10*time.Second, 10*time.Millisecond)

	require.NoError(t, srv.Stop(ctx))
	require.ErrorContains(t, check.Check(ctx), "TLS handshake")
}

func TestReadinessOnAllInterfaces(t *testing.T) {
	t.Parallel()
	f := startFixture(t, podHooks(), func(o *webhook.Options) { o.Host = "" })
	require.True(t, f.server.Addr().IP.IsUnspecified())
	require.NoError(t, f.server.ReadinessCheck().Check(context.Background()))
}

func TestGracefulStop(t *testing.T) {
	t.Parallel()
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	slow := webhook.Validating(testHook("/slow"), validateFunc(func(context.Context, *corev1.Pod) (ports.Warnings, error) {
		once.Do(func() { close(entered) })
		<-release
		return nil, nil
	}))
	f := startFixture(t, []webhook.Hook{slow}, nil)

	done := make(chan *admissionv1.AdmissionResponse)
	go func() { done <- f.admit(t, "/slow", podReview(t, "s1", admissionv1.Create, testPod(nil), nil)) }()
	<-entered

	stopped := make(chan error)
	go func() { stopped <- f.server.Stop(context.Background()) }()
	select {
	case err := <-stopped:
		t.Fatalf("Stop returned before the request in flight finished: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	got := <-done
	assert.True(t, got.Allowed, "the request in flight was answered")
	require.NoError(t, <-stopped)
}

func TestStopGivesUpWhenItsContextEnds(t *testing.T) {
	t.Parallel()
	entered, release := make(chan struct{}), make(chan struct{})
	stuck := webhook.Validating(testHook("/stuck"), validateFunc(func(context.Context, *corev1.Pod) (ports.Warnings, error) {
		close(entered)
		<-release
		return nil, nil
	}))
	f := startFixture(t, []webhook.Hook{stuck}, nil)
	errs := make(chan error, 1)
	go func() {
		_, err := f.client.Post(f.base+"/stuck", "application/json", bytes.NewReader(podReview(t, "s", admissionv1.Create, testPod(nil), nil)))
		errs <- err
	}()
	<-entered
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err := f.server.Stop(ctx)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Error(t, <-errs, "the stuck request's connection was closed")
	close(release)
}

func TestStartErrors(t *testing.T) {
	t.Parallel()
	f := startFixture(t, podHooks(), nil)
	require.ErrorContains(t, f.server.Start(context.Background()), "already started")

	other, err := webhook.New(webhook.Options{Host: "127.0.0.1", Port: f.server.Addr().Port}, fileSource(t, f.dir, time.Second, zap.NewNop()), podHooks(), prometheus.NewRegistry(), zap.NewNop())
	require.NoError(t, err)
	err = other.Start(context.Background())
	require.ErrorContains(t, err, "address already in use")
}

func TestNewRejectsBadConfiguration(t *testing.T) {
	t.Parallel()
	src := fileSource(t, t.TempDir(), time.Second, zap.NewNop())
	hook := podHooks()[0]
	tests := []struct {
		name    string
		opts    webhook.Options
		hooks   []webhook.Hook
		wantErr string
	}{
		{name: "port", opts: webhook.Options{Port: 70000}, hooks: podHooks(), wantErr: "port 70000 out of range"},
		{name: "duplicate path", hooks: []webhook.Hook{hook, hook}, wantErr: "path served twice"},
		{name: "relative path", hooks: []webhook.Hook{withHook(hook, func(h *webhook.Hook) { h.Path = "mutate" })}, wantErr: "must start with /"},
		{name: "no admitter", hooks: []webhook.Hook{withHook(hook, func(h *webhook.Hook) { h.Admitter = nil })}, wantErr: "no admitter"},
		{name: "no type", hooks: []webhook.Hook{withHook(hook, func(h *webhook.Hook) { h.Type = "" })}, wantErr: "type"},
		{name: "no operations", hooks: []webhook.Hook{withHook(hook, func(h *webhook.Hook) { h.Operations = nil })}, wantErr: "no operations"},
		{name: "timeout", hooks: []webhook.Hook{withHook(hook, func(h *webhook.Hook) { h.TimeoutSeconds = 31 })}, wantErr: "outside 1..30"},
		{name: "metadata only without ObjectMeta", hooks: []webhook.Hook{webhook.Validating(withHook(testHook("/plain"), func(h *webhook.Hook) { h.MetadataOnly = true }),
			ports.Validator[*plainObject](nil))}, wantErr: "has no ObjectMeta"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := webhook.New(tt.opts, src, tt.hooks, prometheus.NewRegistry(), zap.NewNop())
			require.ErrorContains(t, err, tt.wantErr)
		})
	}
	t.Run("metrics registered twice", func(t *testing.T) {
		t.Parallel()
		reg := prometheus.NewRegistry()
		_, err := webhook.New(webhook.Options{}, src, podHooks(), reg, zap.NewNop())
		require.NoError(t, err)
		_, err = webhook.New(webhook.Options{}, src, podHooks(), reg, zap.NewNop())
		require.ErrorContains(t, err, "register webhook metrics")
	})
	t.Run("missing dependencies", func(t *testing.T) {
		t.Parallel()
		_, err := webhook.New(webhook.Options{}, nil, podHooks(), prometheus.NewRegistry(), zap.NewNop())
		require.Error(t, err)
	})
}

// plainObject is a type a rule could take that embeds no ObjectMeta.
type plainObject struct{ Name string }

func withHook(h webhook.Hook, edit func(*webhook.Hook)) webhook.Hook {
	edit(&h)
	return h
}

func expiredPair(t testing.TB, ca *testCA) testPair {
	t.Helper()
	p, err := ca.IssueAt(time.Now().Add(-2*time.Hour), time.Hour, "127.0.0.1")
	require.NoError(t, err)
	return p
}

// Slow clients (slowloris) cannot hold the server: connections that
// dribble their headers, or never finish the TLS handshake, are closed
// after the read-header timeout, and admission goes on meanwhile.
func TestSlowClientsCannotExhaustTheServer(t *testing.T) {
	t.Parallel()
	// Long enough for a loaded CI machine (race detector, two cores) to
	// set up all the slow connections before the first one times out.
	const headerTimeout = 10 * time.Second
	f := startFixture(t, podHooks(), func(o *webhook.Options) { o.ReadHeaderTimeout = headerTimeout })

	const slow = 100
	closed := make(chan time.Duration, 2*slow)
	start := time.Now()
	for i := range slow {
		// Half finish TLS and send a header byte every 100ms; half open
		// TCP only and say nothing.
		var conn net.Conn
		var err error
		if i%2 == 0 {
			conn, err = dialTLS(f, &tls.Config{MinVersion: tls.VersionTLS12})
		} else {
			conn, err = net.Dial("tcp", f.server.Addr().String())
		}
		require.NoError(t, err)
		t.Cleanup(func() { _ = conn.Close() })
		go func(conn net.Conn, dribble bool) {
			if dribble {
				_, _ = conn.Write([]byte("POST /mutate--v1-pod HTTP/1.1\r\n"))
			}
			buf := make([]byte, 1)
			for {
				if dribble {
					if _, err := conn.Write([]byte("X")); err != nil {
						break
					}
				}
				_ = conn.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
				if _, err := conn.Read(buf); err != nil && !isTimeout(err) {
					break
				}
				if time.Since(start) > 4*headerTimeout {
					break
				}
			}
			closed <- time.Since(start)
		}(conn, i%2 == 0)
	}

	// Admission is served while they hang on.
	review := podReview(t, "fast", admissionv1.Create, testPod(nil), nil)
	for range 20 {
		resp, _ := f.post(t, "/mutate--v1-pod", "application/json", review)
		require.Equal(t, http.StatusOK, resp.StatusCode)
	}
	assert.Empty(t, closed, "served while every slow connection was still open")
	for range slow {
		select {
		case d := <-closed:
			assert.Less(t, d, 2*headerTimeout, "a slow connection is closed by the server")
		case <-time.After(4 * headerTimeout):
			t.Fatal("a slow connection is still open")
		}
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
