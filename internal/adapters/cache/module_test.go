package cache_test

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/fx"
	"go.uber.org/fx/fxtest"
	"go.uber.org/zap"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/metadata"

	"github.com/hexagonal-operator/operator/internal/adapters/cache"
	"github.com/hexagonal-operator/operator/internal/kubeclient"
	"github.com/hexagonal-operator/operator/internal/ports"
)

func TestModule(t *testing.T) {
	t.Parallel()
	graph := func(extra ...fx.Option) fx.Option {
		return fx.Options(
			cache.Module,
			fx.Supply(
				fx.Annotate(kube(fake.NewClientset(replicaSet("apps", "web"))), fx.As(new(kubeclient.Interface))),
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
		Reader     ports.ReplicaSetReader
		Pods       ports.PodMetadataLister
		Sync       ports.CacheSync
		Checks     []ports.HealthCheck `group:"readyz"`
		ReplicaSet ports.Source        `name:"replicaset"`
		Pod        ports.Source        `name:"pod"`
	}
	app := fxtest.New(t, graph(fx.Populate(&in)))
	require.NoError(t, in.ReplicaSet.AddEventHandler(&handler{}))
	assert.False(t, in.Sync.HasSynced(), "nothing runs before the app starts")

	app.RequireStart()
	require.Eventually(t, in.Sync.HasSynced, waitFor, tick, "OnStart started the informers")
	require.Len(t, in.Checks, 1)
	assert.Equal(t, cache.HealthCheckName, in.Checks[0].Name())
	assert.NoError(t, in.Checks[0].Check(t.Context()))
	assert.Equal(t, "ReplicaSet", in.ReplicaSet.Kind())
	assert.Equal(t, "Pod", in.Pod.Kind())
	assert.Same(t, in.Reader, in.Pods)

	app.RequireStop()
	assert.False(t, in.Sync.HasSynced(), "OnStop stopped them")
}
