package cache

import (
	"context"

	"go.uber.org/fx"

	"github.com/hexagonal-operator/operator/internal/ports"
)

// Module provides the cache and its ports. It consumes
// kubeclient.Interface, metadata.Interface, prometheus.Registerer,
// *zap.Logger and an [Options] from the graph, and provides:
//
//   - *Cache, ports.ReplicaSetReader, ports.PodMetadataLister and
//     ports.CacheSync;
//   - ports.HealthCheck in the value group "readyz";
//   - ports.Source named "replicaset" and "pod".
//
// The informers start in an OnStart hook (which returns at once) and stop
// in an OnStop hook, bounded by the stop context.
var Module = fx.Module("cache",
	fx.Provide(
		fx.Annotate(New,
			fx.OnStart(func(ctx context.Context, c *Cache) error { return c.Start(ctx) }),
			fx.OnStop(func(ctx context.Context, c *Cache) error { return c.Stop(ctx) }),
			fx.As(fx.Self()),
			fx.As(new(ports.ReplicaSetReader)),
			fx.As(new(ports.PodMetadataLister)),
			fx.As(new(ports.CacheSync)),
		),
		fx.Annotate(func(c *Cache) ports.HealthCheck { return c }, fx.ResultTags(`group:"readyz"`)),
		fx.Annotate(func(c *Cache) ports.Source { return c.ReplicaSets() }, fx.ResultTags(`name:"replicaset"`)),
		fx.Annotate(func(c *Cache) ports.Source { return c.Pods() }, fx.ResultTags(`name:"pod"`)),
	),
)
