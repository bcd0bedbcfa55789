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
	s := httpserve.New("test server", zap.NewNop())
	assert.Nil(t, s.Addr())
	require.NoError(t, s.Stop(context.Background()), "stop before start")

	release := make(chan struct{})
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			<-release
		}
		_, _ = io.WriteString(w, "ok")
	})
	require.NoError(t, s.Start("127.0.0.1:0", &http.Server{Handler: handler, ReadHeaderTimeout: time.Second}, false))
	require.Error(t, s.Start("127.0.0.1:0", &http.Server{ReadHeaderTimeout: time.Second}, false), "started twice")

	other := httpserve.New("other", zap.NewNop())
	err := other.Start(s.Addr().String(), &http.Server{ReadHeaderTimeout: time.Second}, false)
	require.ErrorContains(t, err, "other: listen on", "a taken port fails Start")

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
	s := httpserve.New("test server", zap.NewNop())
	release := make(chan struct{})
	defer close(release)
	require.NoError(t, s.Start("127.0.0.1:0", &http.Server{Handler: http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-release }), ReadHeaderTimeout: time.Second}, false))
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
