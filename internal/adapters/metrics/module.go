package metrics

import (
	"context"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/fx"
	"go.uber.org/zap"

	"github.com/hexagonal-operator/operator/internal/kubeclient"
)

// Module provides the registry and serves it.
//
// It consumes an [Options], a *zap.Logger and, in secure mode, a
// kubeclient.Interface. It provides:
//   - *prometheus.Registry, also as prometheus.Registerer and
//     prometheus.Gatherer, with the Go and process collectors;
//   - *RESTClientMetrics (rest_client_requests_total), counting from its
//     OnStart hook: put this module before the ones that talk to the API
//     server so its hook runs first;
//   - *Server, listening in OnStart (a taken port fails the start) and
//     shutting down gracefully in OnStop, with the expiry of the
//     certificate it serves on the registry.
var Module = fx.Module("metrics",
	fx.Provide(
		fx.Annotate(NewRegistry,
			fx.As(fx.Self()),
			fx.As(new(prometheus.Registerer)),
			fx.As(new(prometheus.Gatherer)),
		),
		fx.Annotate(NewRESTClientMetrics,
			fx.OnStart(func(ctx context.Context, m *RESTClientMetrics) error { return m.Start(ctx) }),
			fx.OnStop(func(ctx context.Context, m *RESTClientMetrics) error { return m.Stop(ctx) }),
		),
		newServer,
	),
	fx.Invoke(func(*RESTClientMetrics, *Server) {}),
)

type serverParams struct {
	fx.In
	Lifecycle  fx.Lifecycle
	Options    Options
	Gatherer   prometheus.Gatherer
	Registerer prometheus.Registerer
	Client     kubeclient.Interface `optional:"true"`
	Logger     *zap.Logger
}

func newServer(p serverParams) (*Server, error) {
	s, err := New(p.Options, p.Gatherer, p.Client, p.Logger.Named("metrics"))
	if err != nil {
		return nil, err
	}
	if err := p.Registerer.Register(s.CertExpiryCollector()); err != nil {
		return nil, fmt.Errorf("metrics server: register certificate expiry: %w", err)
	}
	p.Lifecycle.Append(fx.StartStopHook(s.Start, s.Stop))
	return s, nil
}
