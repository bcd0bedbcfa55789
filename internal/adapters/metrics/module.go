package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/fx"
	"go.uber.org/zap"
	"k8s.io/client-go/kubernetes"

	"github.com/hexagonal-operator/operator/internal/lifecycle"
)

// Module provides the registry and serves it.
//
// It consumes an [Options], a *zap.Logger and, in secure mode, a
// kubernetes.Interface and a [CertSource]. It provides:
//   - *prometheus.Registry, also as prometheus.Registerer and
//     prometheus.Gatherer, with the Go and process collectors;
//   - *RESTClientMetrics (rest_client_requests_total), counting from its
//     start in the phase lifecycle.Telemetry, before the parts that talk
//     to the API server start;
//   - *Server, run in the same phase (a taken port fails the start).
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
	Options  Options
	Gatherer prometheus.Gatherer
	Certs    CertSource           `optional:"true"`
	Client   kubernetes.Interface `optional:"true"`
	Logger   *zap.Logger
}

func newServer(p serverParams) (*Server, error) {
	return New(p.Options, p.Certs, p.Gatherer, p.Client, p.Logger.Named("metrics"))
}
