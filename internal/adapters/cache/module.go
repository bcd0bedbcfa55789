package cache

import (
	"go.uber.org/fx"

	"github.com/hexagonal-operator/operator/internal/lifecycle"
	"github.com/hexagonal-operator/operator/internal/ports"
)

// Module provides the cache. It consumes kubernetes.Interface,
// metadata.Interface, prometheus.Registerer, *zap.Logger and an [Options]
// from the graph, and provides *Cache and its readiness ports.HealthCheck
// in the value group "readyz". The cache knows no kind by itself: the
// composition root builds a [Resource] for each kind it reads or watches
// ([NewResource], [NewMetadataResource], [NewDynamicResource]).
//
// The informers run in the phase lifecycle.Caches: Start returns at once,
// Stop is bounded by the stop context.
var Module = fx.Module("cache",
	fx.Provide(
		New,
		fx.Annotate(func(c *Cache) ports.HealthCheck { return c }, fx.ResultTags(lifecycle.GroupReadyz)),
	),
	lifecycle.Register[*Cache]("informers", lifecycle.Caches),
)
