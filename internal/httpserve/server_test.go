package httpserve_test

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	"go.uber.org/zap"

	"github.com/hexagonal-operator/operator/internal/httpserve"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestServeAndStop(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			<-release
		}
		_, _ = io.WriteString(w, "ok")
	})
	s, err := httpserve.New("test server", "127.0.0.1:0", handler, zap.NewNop())
	require.NoError(t, err)
	assert.Nil(t, s.Addr())
	require.NoError(t, s.Stop(context.Background()), "stop before start")

	require.NoError(t, s.Start(t.Context()))
	require.ErrorContains(t, s.Start(t.Context()), "test server: already started")

	other, err := httpserve.New("other", s.Addr().String(), handler, zap.NewNop())
	require.NoError(t, err)
	require.ErrorContains(t, other.Start(t.Context()), "other: listen on", "a taken port fails Start")

	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Get("http://" + s.Addr().String() + "/")
	require.NoError(t, err)
	_ = resp.Body.Close()

	// An in-flight request finishes during Stop.
	got := make(chan error, 1)
	go func() {
		resp, err := client.Get("http://" + s.Addr().String() + "/slow")
		if err == nil {
			_ = resp.Body.Close()
		}
		got <- err
	}()
	time.Sleep(50 * time.Millisecond) // let the request reach the handler
	stopped := make(chan error, 1)
	go func() { stopped <- s.Stop(context.Background()) }()
	close(release)
	require.NoError(t, <-got)
	require.NoError(t, <-stopped)
}

func TestStopGivesUpAtTheDeadline(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	defer close(release)
	s, err := httpserve.New("test server", "127.0.0.1:0", http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-release }), zap.NewNop())
	require.NoError(t, err)
	require.NoError(t, s.Start(t.Context()))
	go func() {
		resp, err := http.Get("http://" + s.Addr().String() + "/")
		if err == nil {
			_ = resp.Body.Close()
		}
	}()
	time.Sleep(50 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	assert.ErrorContains(t, s.Stop(ctx), "test server: shutdown")
}

func TestNew(t *testing.T) {
	t.Parallel()
	_, err := httpserve.New("test server", "8080", http.NotFoundHandler(), nil)
	require.ErrorContains(t, err, `test server: bind address "8080"`)

	off, err := httpserve.New("test server", httpserve.DisabledAddress, http.NotFoundHandler(), nil)
	require.NoError(t, err)
	require.True(t, off.Disabled())
	require.NoError(t, off.Start(t.Context()), "a disabled server starts as a no-op")
	assert.Nil(t, off.Addr())
}
