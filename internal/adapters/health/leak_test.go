package health_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/hexagonal-operator/operator/internal/adapters/health"
)

// Not parallel: it counts goroutines.
func TestStopLeavesNoGoroutine(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	s, err := health.New(health.Options{BindAddress: "127.0.0.1:0"}, []health.Check{health.Ping}, nil, nil)
	require.NoError(t, err)
	require.NoError(t, s.Start(context.Background()))
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Get("http://" + s.Addr().String() + "/healthz")
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	require.NoError(t, s.Stop(context.Background()))
}
