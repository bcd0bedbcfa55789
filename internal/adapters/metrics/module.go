package metrics

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/fx"
	"go.uber.org/zap"
	"k8s.io/client-go/kubernetes"

	"github.com/hexagonal-operator/operator/internal/lifecycle"
)

// Module provides the registry and serves it.
//
// It consumes an [Options], a *zap.Logger and, in secure mode, a
// kubernetes.Interface. It provides:
//   - *prometheus.Registry, also as prometheus.Registerer and
//     prometheus.Gatherer, with the Go and process collectors;
//   - *RESTClientMetrics (rest_client_requests_total), counting from its
//     start in the phase lifecycle.Telemetry, before the parts that talk
//     to the API server start;
//   - *Server, run in the same phase (a taken port fails the start), with
//     the expiry of the certificate it serves, and controller-runtime's
//     certwatcher counters of certificate file reads, on the registry.
var Module = fx.Module("metrics",
	fx.Provide(
		fx.Annotate(NewRegistry,
			fx.As(fx.Self()),
			fx.As(new(prometheus.Registerer)),
			fx.As(new(prometheus.Gatherer)),
		),
		NewRESTClientMetrics,
		newServer,
	),
	lifecycle.Register[*RESTClientMetrics]("client-go-metrics", lifecycle.Telemetry),
	lifecycle.Register[*Server]("metrics", lifecycle.Telemetry),
)

type serverParams struct {
	fx.In
	Options    Options
	Gatherer   prometheus.Gatherer
	Registerer prometheus.Registerer
	Client     kubernetes.Interface `optional:"true"`
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
	if err := s.RegisterCertReadMetrics(p.Registerer); err != nil {
		return nil, err
	}
	return s, nil
}
