package kube_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/fx"
	"go.uber.org/fx/fxtest"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"

	"github.com/hexagonal-operator/operator/internal/adapters/health"
	"github.com/hexagonal-operator/operator/internal/adapters/kube"
)

func TestModule(t *testing.T) {
	t.Parallel()
	cfg := &rest.Config{Host: "https://127.0.0.1:1"}
	options := fx.Options(kube.Module, fx.Supply(cfg, kube.Options{}), fx.NopLogger)
	require.NoError(t, fx.ValidateApp(options))

	var (
		clients *kube.Clients
		k       kubernetes.Interface
		m       metadata.Interface
		d       dynamic.Interface
		probe   *kube.APIServerProbe
	)
	app := fxtest.New(t, options, fx.Populate(&clients, &k, &m, &d, &probe))
	app.RequireStart().RequireStop()
	assert.Same(t, clients.Kubernetes, k)
	assert.NotNil(t, k)
	assert.NotNil(t, m)
	assert.NotNil(t, d)
	assert.NotNil(t, probe)
}

// probeGroups collects the checks of both probe groups as wired.
type probeGroups struct {
	fx.In
	Healthz []health.Check `group:"healthz"`
	Readyz  []health.Check `group:"readyz"`
}

// An API server that answers the operator 429 leaves /readyz and /healthz
// at 200: admission does not need it. The outage shows on the gauge and in
// one log line instead.
func TestReadinessStaysOKWhileTheAPIServerCheckFails(t *testing.T) {
	t.Parallel()
	var throttled atomic.Bool
	throttled.Store(true)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if throttled.Load() {
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"TooManyRequests","code":429}`))
			return
		}
		_, _ = w.Write([]byte(`{"major":"1","minor":"37"}`))
	}))
	defer srv.Close()

	core, logs := observer.New(zapcore.InfoLevel)
	reg := prometheus.NewRegistry()
	var (
		server *health.Server
		probe  *kube.APIServerProbe
		groups probeGroups
	)
	app := fxtest.New(t,
		kube.Module,
		health.Module,
		fx.Supply(&rest.Config{Host: srv.URL}, kube.Options{},
			kube.ProbeOptions{Interval: 10 * time.Millisecond},
			health.Options{BindAddress: "127.0.0.1:0"}),
		fx.Supply(fx.Annotate(reg, fx.As(new(prometheus.Registerer)))),
		fx.Supply(zap.New(core)),
		// Stands in for the webhook server's and the caches' checks, which
		// the API server does not affect once synced.
		fx.Provide(fx.Annotate(func() health.Check { return health.NewCheck("webhook", func(context.Context) error { return nil }) }, fx.ResultTags(`group:"readyz"`))),
		fx.Populate(&server, &probe, &groups),
		fx.NopLogger,
	)
	app.RequireStart()
	defer app.RequireStop()

	for _, c := range append(groups.Healthz, groups.Readyz...) {
		assert.NotEqual(t, kube.APIServerCheckName, c.Name(), "the API server check is in a probe")
	}
	require.Eventually(t, func() bool { ok, known := probe.Reachable(); return known && !ok },
		5*time.Second, 10*time.Millisecond, "the probe sees the 429s")

	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	get := func(path string) (int, string) {
		resp, err := client.Get("http://" + server.Addr().String() + path)
		require.NoError(t, err)
		defer func() { _ = resp.Body.Close() }()
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, string(body)
	}
	// Across several probes of the API server, every readiness answer is 200.
	var samples, ready int
	for deadline := time.Now().Add(200 * time.Millisecond); time.Now().Before(deadline); samples++ {
		if code, _ := get("/readyz"); code == http.StatusOK {
			ready++
		}
	}
	assert.Equal(t, samples, ready, "/readyz answered 200 to every sample")
	code, body := get("/readyz?verbose")
	assert.Equal(t, http.StatusOK, code)
	assert.Contains(t, body, "[+]webhook ok")
	assert.NotContains(t, body, kube.APIServerCheckName)
	code, _ = get("/healthz")
	assert.Equal(t, http.StatusOK, code)

	assert.InDelta(t, 0, testutil.ToFloat64(probe), 0)
	n, err := testutil.GatherAndCount(reg, kube.APIServerReachableMetric)
	require.NoError(t, err)
	assert.Equal(t, 1, n, "the gauge is on the registry")
	assert.Equal(t, 1, logs.FilterMessage("api server unreachable").Len(), "logged once, not per probe")

	throttled.Store(false)
	require.Eventually(t, func() bool { ok, _ := probe.Reachable(); return ok },
		5*time.Second, 10*time.Millisecond, "the probe sees the API server answer")
	assert.InDelta(t, 1, testutil.ToFloat64(probe), 0)
	assert.Equal(t, 1, logs.FilterMessage("api server reachable again").Len())
}
