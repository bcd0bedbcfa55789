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
		newRESTClientMetrics,
		newServer,
	),
	fx.Invoke(func(*RESTClientMetrics, *Server) {}),
)

func newRESTClientMetrics(lc fx.Lifecycle, reg prometheus.Registerer) (*RESTClientMetrics, error) {
	m, err := NewRESTClientMetrics(reg)
	if err != nil {
		return nil, err
	}
	lc.Append(fx.StartStopHook(m.Start, m.Stop))
	return m, nil
}

type serverParams struct {
	fx.In
	Lifecycle fx.Lifecycle
	Options   Options
	Gatherer  prometheus.Gatherer
	Certs     CertSource           `optional:"true"`
	Client    kubernetes.Interface `optional:"true"`
	Logger    *zap.Logger
}

func newServer(p serverParams) (*Server, error) {
	s, err := New(p.Options, p.Certs, p.Gatherer, p.Client, p.Logger.Named("metrics"))
	if err != nil {
		return nil, err
	}
	p.Lifecycle.Append(fx.StartStopHook(s.Start, s.Stop))
	return s, nil
}
