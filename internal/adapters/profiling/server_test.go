package profiling_test

import (
	"context"
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
	"go.uber.org/goleak"
	"go.uber.org/zap"

	"github.com/hexagonal-operator/operator/internal/adapters/profiling"
)

func get(t *testing.T, h http.Handler, target string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
	body, err := io.ReadAll(rec.Result().Body)
	require.NoError(t, err)
	return rec.Code, string(body)
}

func TestServesTheProfiles(t *testing.T) {
	t.Parallel()
	s, err := profiling.New(profiling.Options{BindAddress: "127.0.0.1:0"}, nil)
	require.NoError(t, err)
	tests := []struct {
		target   string
		wantCode int
		wantBody string // contained
	}{
		{"/debug/pprof/", http.StatusOK, "goroutine"},
		{"/debug/pprof/goroutine?debug=1", http.StatusOK, "profiling_test.TestServesTheProfiles"},
		{"/debug/pprof/heap?debug=1", http.StatusOK, "heap profile"},
		{"/debug/pprof/cmdline", http.StatusOK, "profiling.test"},
		{"/debug/pprof/symbol", http.StatusOK, "num_symbols"},
		{"/debug/pprof/nonesuch", http.StatusNotFound, "Unknown profile"},
		{"/metrics", http.StatusNotFound, ""},
	}
	for _, tt := range tests {
		t.Run(tt.target, func(t *testing.T) {
			t.Parallel()
			code, body := get(t, s.Handler(), tt.target)
			assert.Equal(t, tt.wantCode, code)
			assert.Contains(t, body, tt.wantBody)
		})
	}
}

func TestCPUProfileOverTheWire(t *testing.T) {
	t.Parallel()
	s, err := profiling.New(profiling.Options{BindAddress: "127.0.0.1:0"}, nil)
	require.NoError(t, err)
	require.NoError(t, s.Start(t.Context()))
	t.Cleanup(func() { require.NoError(t, s.Stop(context.Background())) })
	resp, err := http.Get("http://" + s.Addr().String() + "/debug/pprof/profile?seconds=1")
	require.NoError(t, err)
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "application/octet-stream", resp.Header.Get("Content-Type"))
	require.Greater(t, len(body), 2)
	assert.Equal(t, []byte{0x1f, 0x8b}, body[:2], "a gzipped profile")
}

func TestOffByDefault(t *testing.T) {
	t.Parallel()
	for _, addr := range []string{"", profiling.DisabledBindAddress} {
		s, err := profiling.New(profiling.Options{BindAddress: addr}, nil)
		require.NoError(t, err)
		assert.True(t, s.Disabled())
		require.NoError(t, s.Start(t.Context()))
		assert.Nil(t, s.Addr(), "listens on nothing")
		require.NoError(t, s.Stop(t.Context()))
	}
}

func TestBadInput(t *testing.T) {
	t.Parallel()
	_, err := profiling.New(profiling.Options{BindAddress: "localhost"}, nil)
	require.ErrorContains(t, err, `profiling server: bind address "localhost"`)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer func() { _ = ln.Close() }()
	s, err := profiling.New(profiling.Options{BindAddress: ln.Addr().String()}, nil)
	require.NoError(t, err)
	require.ErrorContains(t, s.Start(t.Context()), "profiling server: listen on", "a taken port fails the start")
}

func TestModuleListensBetweenStartAndStop(t *testing.T) {
	t.Parallel()
	var s *profiling.Server
	app := fxtest.New(t,
		profiling.Module,
		fx.Supply(profiling.Options{BindAddress: "127.0.0.1:0"}, zap.NewNop()),
		fx.Populate(&s),
	)
	app.RequireStart()
	addr := s.Addr().String()
	resp, err := http.Get("http://" + addr + "/debug/pprof/")
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	app.RequireStop()
	_, err = (&net.Dialer{Timeout: time.Second}).Dial("tcp", addr)
	assert.Error(t, err, "closed after stop")
}

// Not parallel: it counts goroutines.
func TestStopLeavesNoGoroutine(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	s, err := profiling.New(profiling.Options{BindAddress: "127.0.0.1:0"}, nil)
	require.NoError(t, err)
	require.NoError(t, s.Start(context.Background()))
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Get("http://" + s.Addr().String() + "/debug/pprof/heap")
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	require.NoError(t, s.Stop(context.Background()))
}
