package leaderelection_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/fx"
	"go.uber.org/fx/fxtest"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/hexagonal-operator/operator/internal/adapters/health"
	"github.com/hexagonal-operator/operator/internal/adapters/leaderelection"
)

// fast are durations that keep the tests short and still pass validation.
func fast(opts leaderelection.Options) leaderelection.Options {
	opts.Enabled = true
	if opts.Namespace == "" {
		opts.Namespace = "default"
	}
	opts.LeaseDuration, opts.RenewDeadline, opts.RetryPeriod = 3*time.Second, 2*time.Second, 200*time.Millisecond
	return opts
}

func status(t *testing.T, reg prometheus.Gatherer, name string) float64 {
	t.Helper()
	families, err := reg.Gather()
	require.NoError(t, err)
	for _, f := range families {
		if f.GetName() != "leader_election_master_status" {
			continue
		}
		require.Len(t, f.GetMetric(), 1, "one series per lease")
		m := f.GetMetric()[0]
		require.Equal(t, name, m.GetLabel()[0].GetValue())
		return m.GetGauge().GetValue()
	}
	t.Fatal("leader_election_master_status missing")
	return 0
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func TestDisabledLeadsAtOnce(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	e, err := leaderelection.New(nil, reg, leaderelection.Options{}, nil)
	require.NoError(t, err)
	assert.True(t, isClosed(e.Elected()))
	assert.True(t, e.IsLeader())
	require.NoError(t, e.Start(context.Background()))
	require.NoError(t, e.Check(context.Background()))
	require.NoError(t, e.Stop(context.Background()))
	families, err := reg.Gather()
	require.NoError(t, err)
	assert.Empty(t, families, "a disabled elector reports no series")
}

func TestOptionsValidation(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		opts leaderelection.Options
		want string
	}{
		{"no namespace", leaderelection.Options{Enabled: true}, "namespace"},
		{"lease not longer than renew", leaderelection.Options{Enabled: true, Namespace: "ns", LeaseDuration: 10 * time.Second, RenewDeadline: 10 * time.Second}, "lease duration (10s) must be longer than the renew deadline (10s)"},
		{"renew too close to retry", leaderelection.Options{Enabled: true, Namespace: "ns", RenewDeadline: 5 * time.Second, RetryPeriod: 5 * time.Second}, "renew deadline (5s) must be longer than the retry period (5s) times the jitter factor 1.2"},
		{"lease too short for whole seconds", leaderelection.Options{Enabled: true, Namespace: "ns", LeaseDuration: 1500 * time.Millisecond, RenewDeadline: time.Second, RetryPeriod: 100 * time.Millisecond}, "lease duration (1.5s) must be at least 2s"},
		{"negative", leaderelection.Options{Enabled: true, Namespace: "ns", RetryPeriod: -time.Second}, "must be positive"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := leaderelection.New(fake.NewClientset(), prometheus.NewRegistry(), tt.opts, nil)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestDefaults(t *testing.T) {
	t.Parallel()
	e, err := leaderelection.New(fake.NewClientset(), prometheus.NewRegistry(), leaderelection.Options{Enabled: true, Namespace: "ns"}, nil)
	require.NoError(t, err)
	host, id, ok := strings.Cut(e.Identity(), "_")
	assert.True(t, ok, "identity is host_uuid: %q", e.Identity())
	assert.NotEmpty(t, host)
	assert.Len(t, id, 36)
	other, err := leaderelection.New(fake.NewClientset(), prometheus.NewRegistry(), leaderelection.Options{Enabled: true, Namespace: "ns"}, nil)
	require.NoError(t, err)
	assert.NotEqual(t, e.Identity(), other.Identity())
	assert.False(t, isClosed(e.Elected()))
}

func TestLeadsAndReleases(t *testing.T) {
	t.Parallel()
	cs := fake.NewClientset()
	reg := prometheus.NewRegistry()
	e, err := leaderelection.New(cs, reg, fast(leaderelection.Options{ID: "lead", Identity: "me"}), zaptest.NewLogger(t))
	require.NoError(t, err)
	assert.Equal(t, 0.0, status(t, reg, "lead"))
	require.NoError(t, e.Start(context.Background()))

	select {
	case <-e.Elected():
	case <-time.After(10 * time.Second):
		t.Fatal("not elected")
	}
	assert.True(t, e.IsLeader())
	assert.Equal(t, 1.0, status(t, reg, "lead"))
	lease, err := cs.CoordinationV1().Leases("default").Get(context.Background(), "lead", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, "me", *lease.Spec.HolderIdentity)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, e.Stop(ctx))
	assert.False(t, e.IsLeader())
	assert.Equal(t, 0.0, status(t, reg, "lead"))
	lease, err = cs.CoordinationV1().Leases("default").Get(context.Background(), "lead", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Empty(t, ptrValue(lease.Spec.HolderIdentity), "lease not released on Stop")
}

func ptrValue(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// failingUpdates makes Lease updates fail once broken is set, as an
// unreachable API server would.
func failingUpdates(cs *fake.Clientset) *atomic.Bool {
	var broken atomic.Bool
	cs.PrependReactor("update", "leases", func(k8stesting.Action) (bool, runtime.Object, error) {
		if broken.Load() {
			return true, nil, errors.New("connection refused")
		}
		return false, nil, nil
	})
	return &broken
}

func TestLosingTheLeaseCallsOnLost(t *testing.T) {
	t.Parallel()
	cs := fake.NewClientset()
	broken := failingUpdates(cs)
	reg := prometheus.NewRegistry()
	var lost atomic.Int32
	e, err := leaderelection.New(cs, reg, fast(leaderelection.Options{ID: "lose", OnLost: func() { lost.Add(1) }}), zaptest.NewLogger(t))
	require.NoError(t, err)
	require.NoError(t, e.Start(context.Background()))
	t.Cleanup(func() { _ = e.Stop(context.Background()) })
	select {
	case <-e.Elected():
	case <-time.After(10 * time.Second):
		t.Fatal("not elected")
	}

	broken.Store(true)
	require.Eventually(t, func() bool { return lost.Load() == 1 }, 10*time.Second, 20*time.Millisecond)
	assert.False(t, e.IsLeader())
	assert.Equal(t, 0.0, status(t, reg, "lose"))
}

func TestStandbyWaits(t *testing.T) {
	t.Parallel()
	cs := fake.NewClientset()
	a, err := leaderelection.New(cs, prometheus.NewRegistry(), fast(leaderelection.Options{ID: "shared", Identity: "a"}), zaptest.NewLogger(t))
	require.NoError(t, err)
	b, err := leaderelection.New(cs, prometheus.NewRegistry(), fast(leaderelection.Options{ID: "shared", Identity: "b"}), zaptest.NewLogger(t))
	require.NoError(t, err)
	require.NoError(t, a.Start(context.Background()))
	<-a.Elected()
	require.NoError(t, b.Start(context.Background()))
	t.Cleanup(func() { _ = b.Stop(context.Background()) })

	// b keeps trying while a renews; after a releases, b takes over.
	require.Never(t, func() bool { return isClosed(b.Elected()) }, 4*time.Second, 50*time.Millisecond)
	require.NoError(t, a.Stop(context.Background()))
	require.Eventually(t, func() bool { return isClosed(b.Elected()) }, 10*time.Second, 20*time.Millisecond)
}

func TestModuleShutsDownOnLoss(t *testing.T) {
	t.Parallel()
	cs := fake.NewClientset()
	broken := failingUpdates(cs)
	var e *leaderelection.Elector
	app := fxtest.New(t,
		leaderelection.Module,
		fx.Supply(
			fast(leaderelection.Options{ID: "module"}),
			fx.Annotate(cs, fx.As(new(kubernetes.Interface))),
			fx.Annotate(prometheus.NewRegistry(), fx.As(new(prometheus.Registerer))),
			zap.NewNop(),
		),
		fx.Populate(&e),
	)
	app.RequireStart()
	defer app.RequireStop()
	var check health.Check = e // the liveness check the composition root registers
	assert.Equal(t, "leader-election", check.Name())
	select {
	case <-e.Elected():
	case <-time.After(10 * time.Second):
		t.Fatal("not elected")
	}
	broken.Store(true)
	select {
	case sig := <-app.Wait():
		assert.Equal(t, 1, sig.ExitCode)
	case <-time.After(10 * time.Second):
		t.Fatal("losing the lease did not shut the application down")
	}
}

func slowpath(t *testing.T, reg prometheus.Gatherer, name string) float64 {
	t.Helper()
	families, err := reg.Gather()
	require.NoError(t, err)
	for _, f := range families {
		if f.GetName() == "leader_election_slowpath_total" {
			require.Len(t, f.GetMetric(), 1)
			require.Equal(t, name, f.GetMetric()[0].GetLabel()[0].GetValue())
			return f.GetMetric()[0].GetCounter().GetValue()
		}
	}
	t.Fatal("leader_election_slowpath_total missing")
	return 0
}

// A renewal whose optimistic update conflicts rereads the Lease and renews
// it: counted as client-go's slow path, on the elector's own registry.
func TestSlowPathIsCountedFromZero(t *testing.T) {
	t.Parallel()
	cs := fake.NewClientset()
	var conflicts atomic.Int32
	cs.PrependReactor("update", "leases", func(k8stesting.Action) (bool, runtime.Object, error) {
		if conflicts.Add(-1) >= 0 {
			return true, nil, apierrors.NewConflict(coordinationv1.Resource("leases"), "slow", errors.New("changed"))
		}
		return false, nil, nil
	})
	reg := prometheus.NewPedanticRegistry()
	e, err := leaderelection.New(cs, reg, fast(leaderelection.Options{ID: "slow"}), zaptest.NewLogger(t))
	require.NoError(t, err)
	assert.Zero(t, slowpath(t, reg, "slow"))
	require.NoError(t, e.Start(context.Background()))
	t.Cleanup(func() { _ = e.Stop(context.Background()) })
	select {
	case <-e.Elected():
	case <-time.After(10 * time.Second):
		t.Fatal("not elected")
	}
	assert.Zero(t, slowpath(t, reg, "slow"), "fast renewals skip it")

	conflicts.Store(1)
	require.Eventually(t, func() bool { return slowpath(t, reg, "slow") == 1 }, 10*time.Second, 20*time.Millisecond)
	assert.True(t, e.IsLeader(), "renewed through the slow path")
	assert.Equal(t, 1.0, status(t, reg, "slow"))
}
