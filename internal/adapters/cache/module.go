package cache

import (
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/fx"
	"go.uber.org/zap"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
)

// Module provides the *Cache, which starts and stops with the application.
// It is built where the module is invoked, not at its first reader, so
// that the composition's module order places its start: informers start
// at their first read, so a Cache nothing reads costs nothing.
var Module = fx.Module("cache",
	fx.Provide(newCache),
	fx.Invoke(func(*Cache) {}),
)

type cacheParams struct {
	fx.In
	Lifecycle  fx.Lifecycle
	Client     kubernetes.Interface
	Metadata   metadata.Interface
	Registerer prometheus.Registerer
	Logger     *zap.Logger
	Options    Options
}

func newCache(p cacheParams) (*Cache, error) {
	c, err := New(p.Client, p.Metadata, p.Registerer, p.Logger, p.Options)
	if err != nil {
		return nil, err
	}
	p.Lifecycle.Append(fx.StartStopHook(c.Start, c.Stop))
	return c, nil
}
