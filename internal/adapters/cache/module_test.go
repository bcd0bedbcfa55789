package cache_test

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/fx"
	"go.uber.org/fx/fxtest"
	"go.uber.org/zap"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/metadata"

	"github.com/hexagonal-operator/operator/internal/adapters/cache"
	"github.com/hexagonal-operator/operator/internal/adapters/health"
)

func TestModule(t *testing.T) {
	t.Parallel()
	graph := func(extra ...fx.Option) fx.Option {
		return fx.Options(
			cache.Module,
			fx.Supply(
				fx.Annotate(kube(fake.NewClientset(replicaSet("apps", "web"))), fx.As(new(kubernetes.Interface))),
				fx.Annotate(fakeMetadata(), fx.As(new(metadata.Interface))),
				fx.Annotate(prometheus.NewRegistry(), fx.As(new(prometheus.Registerer))),
				zap.NewNop(),
				cache.Options{},
			),
			fx.NopLogger,
			fx.Options(extra...),
		)
	}
	require.NoError(t, fx.ValidateApp(graph()))

	var in struct {
		fx.In
		Cache *cache.Cache
	}
	app := fxtest.New(t, graph(fx.Populate(&in)))
	replicaSets := rsOf(t, in.Cache)
	require.NoError(t, replicaSets.AddEventHandler(&handler{}))
	assert.False(t, in.Cache.HasSynced(), "nothing runs before the app starts")

	app.RequireStart()
	require.Eventually(t, in.Cache.HasSynced, waitFor, tick, "the lifecycle started the informers")
	require.NoError(t, replicaSets.WaitForSync(t.Context()))
	var check health.Check = in.Cache // the readiness check the composition root registers
	assert.Equal(t, cache.HealthCheckName, check.Name())
	assert.NoError(t, check.Check(t.Context()))

	app.RequireStop()
	assert.False(t, in.Cache.HasSynced(), "the lifecycle stopped them")
	assert.ErrorIs(t, replicaSets.WaitForSync(t.Context()), cache.ErrStopped)
}
