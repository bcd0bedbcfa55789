package metrics_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/hexagonal-operator/operator/internal/adapters/metrics"
)

// fakeAPIServer answers every request with 404 Not Found, which is enough
// for client-go to report a request result.
func fakeAPIServer(t *testing.T) (kubernetes.Interface, string) {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`))
	}))
	t.Cleanup(srv.Close)
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL})
	require.NoError(t, err)
	u, err := url.Parse(srv.URL)
	require.NoError(t, err)
	return cs, u.Host
}

func getNamespace(t *testing.T, cs kubernetes.Interface) {
	t.Helper()
	_, err := cs.CoreV1().Namespaces().Get(context.Background(), "absent", metav1.GetOptions{})
	require.Error(t, err)
}

func TestRESTClientMetricsCountPerAttachedRegistry(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	regA, err := metrics.NewRegistry()
	require.NoError(t, err)
	regB, err := metrics.NewRegistry()
	require.NoError(t, err)
	a, err := metrics.NewRESTClientMetrics(regA)
	require.NoError(t, err)
	b, err := metrics.NewRESTClientMetrics(regB)
	require.NoError(t, err)

	cs, host := fakeAPIServer(t)
	labels := map[string]string{"code": "404", "method": "GET", "host": host}

	// Before Start nothing is counted.
	getNamespace(t, cs)
	_, found := sampleValue(t, regA, "rest_client_requests_total", labels)
	assert.False(t, found)

	require.NoError(t, a.Start(ctx))
	require.NoError(t, b.Start(ctx))
	getNamespace(t, cs)
	getNamespace(t, cs)
	va, _ := sampleValue(t, regA, "rest_client_requests_total", labels)
	vb, _ := sampleValue(t, regB, "rest_client_requests_total", labels)
	assert.Equal(t, 2.0, va)
	assert.Equal(t, 2.0, vb)

	// After Stop, a registry keeps its counts but stops counting.
	require.NoError(t, a.Stop(ctx))
	getNamespace(t, cs)
	va, _ = sampleValue(t, regA, "rest_client_requests_total", labels)
	vb, _ = sampleValue(t, regB, "rest_client_requests_total", labels)
	assert.Equal(t, 2.0, va)
	assert.Equal(t, 3.0, vb)
	require.NoError(t, b.Stop(ctx))
}

func TestNewRESTClientMetricsNeedsRegisterer(t *testing.T) {
	t.Parallel()
	_, err := metrics.NewRESTClientMetrics(nil)
	require.Error(t, err)
}
