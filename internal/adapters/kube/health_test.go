package kube_test

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/rest"

	"github.com/hexagonal-operator/operator/internal/adapters/kube"
)

func TestAPIServerCheckFollowsTheServer(t *testing.T) {
	t.Parallel()
	var up atomic.Bool
	var calls atomic.Int32
	up.Store(true)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if r.URL.Path != "/version" || !up.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte(`{"major":"1","minor":"37"}`))
	}))
	defer srv.Close()
	clients, err := kube.NewClients(&rest.Config{Host: srv.URL}, kube.Options{})
	require.NoError(t, err)
	check, err := kube.NewAPIServerCheck(clients.Kubernetes)
	require.NoError(t, err)
	assert.Equal(t, "apiserver", check.Name())

	require.NoError(t, check.Check(t.Context()))
	require.NoError(t, check.Check(t.Context()))
	assert.Equal(t, int32(1), calls.Load(), "an answer is reused within a second")

	up.Store(false)
	require.Eventually(t, func() bool { return check.Check(t.Context()) != nil }, 5*time.Second, 50*time.Millisecond)
	assert.ErrorContains(t, check.Check(t.Context()), "api server unreachable")

	up.Store(true)
	require.Eventually(t, func() bool { return check.Check(t.Context()) == nil }, 5*time.Second, 50*time.Millisecond)
}

func TestAPIServerCheckNeedsAClient(t *testing.T) {
	t.Parallel()
	_, err := kube.NewAPIServerCheck(nil)
	assert.Error(t, err)
}
