package metrics_test

import (
	"context"
	"crypto/tls"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/hexagonal-operator/operator/internal/adapters/certs"
	"github.com/hexagonal-operator/operator/internal/adapters/metrics"
)

// Not parallel: it counts goroutines.
func TestStopLeavesNoGoroutine(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	cs, _, _ := reviewingClientset()
	s, err := metrics.New(metrics.Options{BindAddress: "127.0.0.1:0", Secure: true}, &certs.SelfSigned{}, registryWithCounter(t), cs, nil)
	require.NoError(t, err)
	require.NoError(t, s.Start(context.Background()))
	client := &http.Client{Transport: &http.Transport{
		DisableKeepAlives: true,
		TLSClientConfig:   &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // self-signed test server
	}}
	code, _, _ := get(t, client, "https://"+s.Addr().String()+"/metrics", "good-scraper")
	require.Equal(t, http.StatusOK, code)
	require.NoError(t, s.Stop(context.Background()))
}
