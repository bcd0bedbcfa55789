package health_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/fx"
	"go.uber.org/fx/fxtest"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/hexagonal-operator/operator/internal/adapters/health"
)

func failing(name, reason string) health.Check {
	return health.NewCheck(name, func(context.Context) error { return errors.New(reason) })
}

func passing(name string) health.Check {
	return health.NewCheck(name, func(context.Context) error { return nil })
}

func probe(t *testing.T, h http.Handler, target string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
	body, err := io.ReadAll(rec.Result().Body)
	require.NoError(t, err)
	return rec.Code, string(body)
}

func TestProbes(t *testing.T) {
	t.Parallel()
	healthz := []health.Check{health.Ping}
	readyz := []health.Check{passing("webhook-tls"), failing("cache-sync", "informers not synced")}
	s, err := health.New(health.Options{}, healthz, readyz, zaptest.NewLogger(t))
	require.NoError(t, err)
	h := s.Handler()

	tests := []struct {
		target   string
		wantCode int
		wantBody string
	}{
		{"/healthz", http.StatusOK, "ok"},
		{"/healthz?verbose", http.StatusOK, "[+]ping ok\nhealthz check passed\n"},
		{"/healthz/ping", http.StatusOK, "ok"},
		{"/healthz/absent", http.StatusNotFound, "no healthz check called \"absent\"\n"},
		{"/readyz", http.StatusInternalServerError, "[-]cache-sync failed: informers not synced\n[+]webhook-tls ok\nreadyz check failed\n"},
		{"/readyz?verbose", http.StatusInternalServerError, "[-]cache-sync failed: informers not synced\n[+]webhook-tls ok\nreadyz check failed\n"},
		{"/readyz?exclude=cache-sync", http.StatusOK, "ok"},
		{"/readyz?exclude=cache-sync&verbose", http.StatusOK, "[+]cache-sync excluded: ok\n[+]webhook-tls ok\nreadyz check passed\n"},
		{"/readyz/webhook-tls", http.StatusOK, "ok"},
		{"/readyz/cache-sync", http.StatusInternalServerError, "internal server error: informers not synced\n"},
		{"/other", http.StatusNotFound, "404 page not found\n"},
	}
	for _, tt := range tests {
		t.Run(tt.target, func(t *testing.T) {
			t.Parallel()
			code, body := probe(t, h, tt.target)
			assert.Equal(t, tt.wantCode, code)
			assert.Equal(t, tt.wantBody, body)
		})
	}
}

func TestEmptyProbeIsHealthy(t *testing.T) {
	t.Parallel()
	s, err := health.New(health.Options{}, nil, nil, nil)
	require.NoError(t, err)
	code, body := probe(t, s.Handler(), "/readyz")
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, "ok", body)
}

func TestSlowCheckTimesOut(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	stuck := health.NewCheck("stuck", func(context.Context) error {
		<-release // ignores its context, like a wedged check would
		return nil
	})
	s, err := health.New(health.Options{CheckTimeout: 50 * time.Millisecond}, []health.Check{stuck}, nil, nil)
	require.NoError(t, err)
	began := time.Now()
	code, body := probe(t, s.Handler(), "/healthz")
	assert.Equal(t, http.StatusInternalServerError, code)
	assert.Contains(t, body, "[-]stuck failed: timed out after 50ms")
	assert.Less(t, time.Since(began), 5*time.Second)
}

func TestPanickingCheckFails(t *testing.T) {
	t.Parallel()
	boom := health.NewCheck("boom", func(context.Context) error { panic("kaput") })
	s, err := health.New(health.Options{}, nil, []health.Check{boom}, nil)
	require.NoError(t, err)
	code, body := probe(t, s.Handler(), "/readyz")
	assert.Equal(t, http.StatusInternalServerError, code)
	assert.Contains(t, body, "[-]boom failed: panic: kaput")
}

func TestNewRejectsBadChecks(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		checks []health.Check
		want   string
	}{
		{"duplicate", []health.Check{passing("a"), passing("a")}, `two checks are called "a"`},
		{"empty name", []health.Check{passing("")}, "non-empty"},
		{"slash", []health.Check{passing("a/b")}, "without /"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := health.New(health.Options{}, nil, tt.checks, nil)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
	_, err := health.New(health.Options{BindAddress: "nonsense"}, nil, nil, nil)
	assert.ErrorContains(t, err, "nonsense")
}

func TestServerServesAndStops(t *testing.T) {
	t.Parallel()
	s, err := health.New(health.Options{BindAddress: "127.0.0.1:0"}, []health.Check{health.Ping}, nil, zaptest.NewLogger(t))
	require.NoError(t, err)
	require.NoError(t, s.Start(context.Background()))
	addr := s.Addr().String()

	resp, err := http.Get("http://" + addr + "/healthz")
	require.NoError(t, err)
	_ = resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)

	// A second server on the same address fails its start.
	other, err := health.New(health.Options{BindAddress: addr}, nil, nil, nil)
	require.NoError(t, err)
	assert.ErrorContains(t, other.Start(context.Background()), addr)

	require.NoError(t, s.Stop(context.Background()))
	_, err = net.DialTimeout("tcp", addr, time.Second)
	assert.Error(t, err, "still listening after Stop")
}

func TestServerDisabled(t *testing.T) {
	t.Parallel()
	s, err := health.New(health.Options{BindAddress: "0"}, nil, nil, nil)
	require.NoError(t, err)
	require.NoError(t, s.Start(context.Background()))
	assert.Nil(t, s.Addr())
	require.NoError(t, s.Stop(context.Background()))
}

func TestModuleCollectsGroups(t *testing.T) {
	t.Parallel()
	var s *health.Server
	app := fxtest.New(t,
		health.Module,
		fx.Supply(health.Options{BindAddress: "127.0.0.1:0"}, zap.NewNop()),
		fx.Provide(fx.Annotate(func() health.Check { return failing("cache-sync", "not yet") }, fx.ResultTags(`group:"readyz"`))),
		fx.Populate(&s),
	)
	app.RequireStart()
	defer app.RequireStop()

	code, body := probe(t, s.Handler(), "/healthz?verbose")
	assert.Equal(t, http.StatusOK, code)
	assert.Contains(t, body, "[+]ping ok")
	code, body = probe(t, s.Handler(), "/readyz")
	assert.Equal(t, http.StatusInternalServerError, code)
	assert.Contains(t, body, "[-]cache-sync failed: not yet")
}
