package metrics_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/hexagonal-operator/operator/internal/adapters/certs"
	"github.com/hexagonal-operator/operator/internal/adapters/metrics"
)

// startServer starts s and stops it when the test ends.
func startServer(t *testing.T, s *metrics.Server) string {
	t.Helper()
	require.NoError(t, s.Start(context.Background()))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		assert.NoError(t, s.Stop(ctx))
	})
	require.NotNil(t, s.Addr())
	return s.Addr().String()
}

func registryWithCounter(t *testing.T) *prometheus.Registry {
	t.Helper()
	reg, err := metrics.NewRegistry()
	require.NoError(t, err)
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: "operator_test_total", Help: "A test counter."})
	c.Add(3)
	require.NoError(t, reg.Register(c))
	return reg
}

func get(t *testing.T, client *http.Client, url, token string) (int, string, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := client.Do(req)
	require.NoError(t, err)
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body), resp.Proto
}

func TestServerPlainHTTP(t *testing.T) {
	t.Parallel()
	s, err := metrics.New(metrics.Options{BindAddress: "127.0.0.1:0"}, nil, registryWithCounter(t), nil, zaptest.NewLogger(t))
	require.NoError(t, err)
	addr := startServer(t, s)

	code, body, _ := get(t, http.DefaultClient, "http://"+addr+"/metrics", "")
	assert.Equal(t, http.StatusOK, code)
	assert.Contains(t, body, "operator_test_total 3")
	assert.Contains(t, body, "go_goroutines")

	code, _, _ = get(t, http.DefaultClient, "http://"+addr+"/other", "")
	assert.Equal(t, http.StatusNotFound, code)
}

func TestServerDisabled(t *testing.T) {
	t.Parallel()
	s, err := metrics.New(metrics.Options{BindAddress: "0", Secure: true}, &certs.SelfSigned{}, registryWithCounter(t), nil, nil)
	require.NoError(t, err)
	assert.True(t, s.Disabled())
	require.NoError(t, s.Start(context.Background()))
	assert.Nil(t, s.Addr())
	require.NoError(t, s.Stop(context.Background()))
}

func TestServerBindErrorFailsStart(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = ln.Close() })
	s, err := metrics.New(metrics.Options{BindAddress: ln.Addr().String()}, nil, registryWithCounter(t), nil, nil)
	require.NoError(t, err)
	err = s.Start(context.Background())
	require.Error(t, err)
	assert.Contains(t, err.Error(), ln.Addr().String())
}

func TestNewRejects(t *testing.T) {
	t.Parallel()
	reg := registryWithCounter(t)
	tests := []struct {
		name string
		opts metrics.Options
		reg  prometheus.Gatherer
		want string
	}{
		{"no gatherer", metrics.Options{}, nil, "gatherer"},
		{"secure without client", metrics.Options{Secure: true}, reg, "Kubernetes client"},
		{"bad address", metrics.Options{BindAddress: "nonsense"}, reg, "nonsense"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := metrics.New(tt.opts, nil, tt.reg, nil, nil)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

// reviewingClientset answers TokenReviews (token "good-<user>" is user
// <user>) and SubjectAccessReviews (only user "scraper" may get /metrics),
// counting how often it was asked.
func reviewingClientset() (*fake.Clientset, *atomic.Int32, *atomic.Int32) {
	cs := fake.NewClientset()
	var reviews, sars atomic.Int32
	cs.PrependReactor("create", "tokenreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
		reviews.Add(1)
		tr := a.(k8stesting.CreateAction).GetObject().(*authenticationv1.TokenReview).DeepCopy()
		if user, ok := cutPrefix(tr.Spec.Token, "good-"); ok {
			tr.Status = authenticationv1.TokenReviewStatus{
				Authenticated: true,
				User:          authenticationv1.UserInfo{Username: user, Groups: []string{"system:authenticated"}},
			}
		}
		return true, tr, nil
	})
	cs.PrependReactor("create", "subjectaccessreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
		sars.Add(1)
		sar := a.(k8stesting.CreateAction).GetObject().(*authorizationv1.SubjectAccessReview).DeepCopy()
		nr := sar.Spec.NonResourceAttributes
		sar.Status.Allowed = sar.Spec.User == "scraper" && nr != nil && nr.Path == "/metrics" && nr.Verb == "get"
		return true, sar, nil
	})
	return cs, &reviews, &sars
}

func cutPrefix(s, prefix string) (string, bool) {
	if len(s) > len(prefix) && s[:len(prefix)] == prefix {
		return s[len(prefix):], true
	}
	return "", false
}

func tlsClient(http2 bool) *http.Client {
	tr := &http.Transport{
		TLSClientConfig:   &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // self-signed test server
		ForceAttemptHTTP2: http2,
	}
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}
}

func TestServerSecureAuthenticatesAndAuthorizes(t *testing.T) {
	t.Parallel()
	cs, reviews, sars := reviewingClientset()
	s, err := metrics.New(metrics.Options{BindAddress: "127.0.0.1:0", Secure: true}, &certs.SelfSigned{}, registryWithCounter(t), cs, zaptest.NewLogger(t))
	require.NoError(t, err)
	url := "https://" + startServer(t, s) + "/metrics"
	client := tlsClient(false)

	tests := []struct {
		name, token string
		wantCode    int
	}{
		{"no token", "", http.StatusUnauthorized},
		{"bad token", "forged", http.StatusUnauthorized},
		{"authenticated but not allowed", "good-nobody", http.StatusForbidden},
		{"allowed", "good-scraper", http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body, _ := get(t, client, url, tt.token)
			assert.Equal(t, tt.wantCode, code, body)
			if tt.wantCode == http.StatusOK {
				assert.Contains(t, body, "operator_test_total 3")
			} else {
				assert.NotContains(t, body, "operator_test_total")
			}
		})
	}

	// Repeated scrapes reuse the answers instead of asking the API server.
	reviewsBefore, sarsBefore := reviews.Load(), sars.Load()
	for range 5 {
		code, _, _ := get(t, client, url, "good-scraper")
		require.Equal(t, http.StatusOK, code)
		code, _, _ = get(t, client, url, "good-nobody")
		require.Equal(t, http.StatusForbidden, code)
	}
	assert.Equal(t, reviewsBefore, reviews.Load(), "token reviews were not cached")
	assert.Equal(t, sarsBefore, sars.Load(), "access reviews were not cached")
}

func TestServerSecureVerbIsLowerCaseMethod(t *testing.T) {
	t.Parallel()
	cs, _, _ := reviewingClientset()
	s, err := metrics.New(metrics.Options{BindAddress: "127.0.0.1:0", Secure: true}, &certs.SelfSigned{}, registryWithCounter(t), cs, nil)
	require.NoError(t, err)
	url := "https://" + startServer(t, s) + "/metrics"
	req, err := http.NewRequest(http.MethodPost, url, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer good-scraper")
	resp, err := tlsClient(false).Do(req)
	require.NoError(t, err)
	_ = resp.Body.Close()
	// The reviewer allows only "get", so a POST is forbidden.
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)
}

func TestServerSecureAPIErrorIsInternalError(t *testing.T) {
	t.Parallel()
	cs := fake.NewClientset()
	cs.PrependReactor("create", "tokenreviews", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, io.ErrUnexpectedEOF
	})
	s, err := metrics.New(metrics.Options{BindAddress: "127.0.0.1:0", Secure: true}, &certs.SelfSigned{}, registryWithCounter(t), cs, zaptest.NewLogger(t))
	require.NoError(t, err)
	code, _, _ := get(t, tlsClient(false), "https://"+startServer(t, s)+"/metrics", "good-scraper")
	assert.Equal(t, http.StatusInternalServerError, code)
}

func TestServerSecureProtocols(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		enableHTTP2 bool
		wantProto   string
	}{
		{"HTTP/2 off by default", false, "HTTP/1.1"},
		{"HTTP/2 when enabled", true, "HTTP/2.0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cs, _, _ := reviewingClientset()
			s, err := metrics.New(metrics.Options{BindAddress: "127.0.0.1:0", Secure: true, EnableHTTP2: tt.enableHTTP2}, &certs.SelfSigned{}, registryWithCounter(t), cs, nil)
			require.NoError(t, err)
			code, _, proto := get(t, tlsClient(true), "https://"+startServer(t, s)+"/metrics", "good-scraper")
			assert.Equal(t, http.StatusOK, code)
			assert.Equal(t, tt.wantProto, proto)
		})
	}
}

func TestServerSecureRefusesOldTLS(t *testing.T) {
	t.Parallel()
	cs, _, _ := reviewingClientset()
	s, err := metrics.New(metrics.Options{BindAddress: "127.0.0.1:0", Secure: true}, &certs.SelfSigned{}, registryWithCounter(t), cs, nil)
	require.NoError(t, err)
	addr := startServer(t, s)
	conn, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true, MaxVersion: tls.VersionTLS11}) //nolint:gosec // testing the refusal
	if err == nil {
		_ = conn.Close()
	}
	require.Error(t, err)
}

func TestServerSecureSelfSignedCertificate(t *testing.T) {
	t.Parallel()
	cs, _, _ := reviewingClientset()
	s, err := metrics.New(metrics.Options{BindAddress: "127.0.0.1:0", Secure: true}, &certs.SelfSigned{}, registryWithCounter(t), cs, nil)
	require.NoError(t, err)
	conn, err := tls.Dial("tcp", startServer(t, s), &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // self-signed
	require.NoError(t, err)
	defer func() { _ = conn.Close() }()
	leaf := conn.ConnectionState().PeerCertificates[0]
	assert.Contains(t, leaf.DNSNames, "localhost")
	assert.True(t, leaf.NotAfter.After(time.Now().AddDate(0, 11, 0)))
}

func TestServerStopWaitsForGrace(t *testing.T) {
	t.Parallel()
	s, err := metrics.New(metrics.Options{BindAddress: "127.0.0.1:0"}, nil, registryWithCounter(t), nil, nil)
	require.NoError(t, err)
	require.NoError(t, s.Start(context.Background()))
	addr := s.Addr().String()
	require.NoError(t, s.Stop(context.Background()))
	_, err = net.DialTimeout("tcp", addr, time.Second)
	assert.Error(t, err, "listener still open after Stop")
}

func TestServerSecureCertDir(t *testing.T) {
	t.Parallel()
	cs, _, _ := reviewingClientset()
	files, err := certs.NewFileSource("metrics", certs.Files{Dir: t.TempDir()}, 0, certs.NewReads(), zap.NewNop())
	require.NoError(t, err)
	s, err := metrics.New(metrics.Options{BindAddress: "127.0.0.1:0", Secure: true}, files, registryWithCounter(t), cs, nil)
	require.NoError(t, err)
	err = s.Start(context.Background())
	require.Error(t, err, "an empty certificate folder must fail the start")
	assert.Contains(t, err.Error(), "tls.crt")
	assert.Nil(t, s.Addr(), "nothing listens")
}

// The secure server exports the expiry of the certificate it serves, read
// at scrape time; before it serves one, and in plain HTTP, there is none.
func TestServerSecureExportsItsCertificateExpiry(t *testing.T) {
	t.Parallel()
	cs, _, _ := reviewingClientset()
	src := &certs.SelfSigned{}
	s, err := metrics.New(metrics.Options{BindAddress: "127.0.0.1:0", Secure: true}, src, registryWithCounter(t), cs, nil)
	require.NoError(t, err)
	reg := prometheus.NewRegistry()
	require.NoError(t, reg.Register(certs.Certificates{Metrics: src}.Collector()))
	const series = `operator_certificate_expiry_timestamp_seconds{use="metrics"}`
	n, err := testutil.GatherAndCount(reg, "operator_certificate_expiry_timestamp_seconds")
	require.NoError(t, err)
	assert.Zero(t, n, "no series before the server has a certificate")

	conn, err := tls.Dial("tcp", startServer(t, s), &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // self-signed
	require.NoError(t, err)
	defer func() { _ = conn.Close() }()
	leaf := conn.ConnectionState().PeerCertificates[0]
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(fmt.Sprintf(`
# HELP operator_certificate_expiry_timestamp_seconds Expiry (NotAfter) of a certificate the operator serves, in Unix seconds, by use.
# TYPE operator_certificate_expiry_timestamp_seconds gauge
%s %d
`, series, leaf.NotAfter.Unix()))))

	unused := &certs.SelfSigned{}
	plain, err := metrics.New(metrics.Options{BindAddress: "127.0.0.1:0"}, unused, registryWithCounter(t), nil, nil)
	require.NoError(t, err)
	plainReg := prometheus.NewRegistry()
	require.NoError(t, plainReg.Register(certs.Certificates{Metrics: unused}.Collector()))
	startServer(t, plain)
	n, err = testutil.GatherAndCount(plainReg, "operator_certificate_expiry_timestamp_seconds")
	require.NoError(t, err)
	assert.Zero(t, n, "plain HTTP serves no certificate")
}
