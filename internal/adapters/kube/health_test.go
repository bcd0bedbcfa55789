package kube_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
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

// flakyCheck fails while err is set and counts its calls.
type flakyCheck struct {
	err   atomic.Pointer[error]
	calls atomic.Int32
}

func (*flakyCheck) Name() string { return kube.APIServerCheckName }

func (c *flakyCheck) Check(context.Context) error {
	c.calls.Add(1)
	if err := c.err.Load(); err != nil {
		return *err
	}
	return nil
}

func (c *flakyCheck) fail(err error) { c.err.Store(&err) }
func (c *flakyCheck) heal()          { c.err.Store(nil) }

// waitProbes waits until the check has run n more times.
func (c *flakyCheck) waitProbes(t *testing.T, n int32) {
	t.Helper()
	from := c.calls.Load()
	require.Eventually(t, func() bool { return c.calls.Load() >= from+n }, 5*time.Second, 5*time.Millisecond)
}

func TestAPIServerProbeGaugeAndOneLogLinePerChange(t *testing.T) {
	t.Parallel()
	check := &flakyCheck{}
	core, logs := observer.New(zapcore.InfoLevel)
	reg := prometheus.NewRegistry()
	probe, err := kube.NewAPIServerProbe(check, 5*time.Millisecond, reg, zap.New(core))
	require.NoError(t, err)

	n, err := testutil.GatherAndCount(reg, kube.APIServerReachableMetric)
	require.NoError(t, err)
	assert.Zero(t, n, "no sample before the first probe")
	_, known := probe.Reachable()
	assert.False(t, known)

	require.NoError(t, probe.Start(t.Context()))
	defer func() { require.NoError(t, probe.Stop(context.Background())) }()
	assert.Error(t, probe.Start(t.Context()), "started twice")
	reachable := func(want bool) func() bool {
		return func() bool { ok, known := probe.Reachable(); return known && ok == want }
	}
	require.Eventually(t, reachable(true), 5*time.Second, 5*time.Millisecond)
	assert.InDelta(t, 1, testutil.ToFloat64(probe), 0)
	assert.Zero(t, logs.Len(), "reachable from the start: nothing to say")

	check.fail(errors.New("api server unreachable: i/o timeout"))
	require.Eventually(t, reachable(false), 5*time.Second, 5*time.Millisecond)
	check.waitProbes(t, 5)
	assert.InDelta(t, 0, testutil.ToFloat64(probe), 0)
	lost := logs.FilterMessage("api server unreachable").All()
	require.Len(t, lost, 1, "one line per change, not per probe")
	assert.Equal(t, "api server unreachable: i/o timeout", lost[0].ContextMap()["error"])

	check.heal()
	require.Eventually(t, reachable(true), 5*time.Second, 5*time.Millisecond)
	check.waitProbes(t, 5)
	assert.InDelta(t, 1, testutil.ToFloat64(probe), 0)
	back := logs.FilterMessage("api server reachable again").All()
	require.Len(t, back, 1)
	assert.Contains(t, back[0].ContextMap(), "unreachable_for")
	assert.Equal(t, 2, logs.Len())
}

func TestAPIServerProbeLogsAnOutageFromTheStart(t *testing.T) {
	t.Parallel()
	check := &flakyCheck{}
	check.fail(errors.New("api server unreachable: connection refused"))
	core, logs := observer.New(zapcore.InfoLevel)
	probe, err := kube.NewAPIServerProbe(check, 5*time.Millisecond, nil, zap.New(core))
	require.NoError(t, err)
	require.NoError(t, probe.Start(t.Context()))
	check.waitProbes(t, 3)
	require.NoError(t, probe.Stop(context.Background()))
	assert.Equal(t, 1, logs.FilterMessage("api server unreachable").Len())
	assert.InDelta(t, 0, testutil.ToFloat64(probe), 0)
}

func TestNewAPIServerProbeChecksItsArguments(t *testing.T) {
	t.Parallel()
	_, err := kube.NewAPIServerProbe(nil, 0, nil, nil)
	require.ErrorContains(t, err, "a check is required")
	_, err = kube.NewAPIServerProbe(&flakyCheck{}, -time.Second, nil, nil)
	require.ErrorContains(t, err, "must not be negative")
	reg := prometheus.NewRegistry()
	_, err = kube.NewAPIServerProbe(&flakyCheck{}, 0, reg, nil)
	require.NoError(t, err)
	_, err = kube.NewAPIServerProbe(&flakyCheck{}, 0, reg, nil)
	require.ErrorContains(t, err, "register "+kube.APIServerReachableMetric)
	probe, err := kube.NewAPIServerProbe(&flakyCheck{}, 0, nil, nil)
	require.NoError(t, err)
	assert.NoError(t, probe.Stop(context.Background()), "stop without start")
}
