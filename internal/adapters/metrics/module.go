package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/fx"
	"go.uber.org/zap"
	"k8s.io/client-go/kubernetes"
)

// Module provides the *prometheus.Registry (also as prometheus.Registerer
// and prometheus.Gatherer), client-go's request metrics and the /metrics
// server; in secure mode it needs a kubernetes.Interface and a [CertSource].
// The composition root declares it early, so it starts before the parts
// that talk to the API server and stops after them.
var Module = fx.Module("metrics",
	fx.Provide(
		fx.Annotate(NewRegistry,
			fx.As(fx.Self()),
			fx.As(new(prometheus.Registerer)),
			fx.As(new(prometheus.Gatherer)),
		),
		fx.Annotate(NewRESTClientMetrics, fx.OnStart((*RESTClientMetrics).Start), fx.OnStop((*RESTClientMetrics).Stop)),
		fx.Annotate(newServer, fx.OnStart((*Server).Start), fx.OnStop((*Server).Stop)),
	),
	fx.Invoke(func(*RESTClientMetrics, *Server) {}),
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
