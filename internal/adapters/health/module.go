package health

import (
	"go.uber.org/fx"
	"go.uber.org/zap"

	"github.com/hexagonal-operator/operator/internal/ports"
)

// Module serves the probes.
//
// It consumes an [Options], a *zap.Logger and the ports.HealthCheck values
// of the groups "healthz" (liveness) and "readyz" (readiness); it adds
// [Ping] to "healthz". It provides *Server, listening in OnStart (a taken
// port fails the start) and shutting down in OnStop. Any module adds a check
// with
//
//	fx.Annotate(newCheck, fx.ResultTags(`group:"readyz"`))
var Module = fx.Module("health",
	fx.Provide(
		fx.Annotate(func() ports.HealthCheck { return Ping }, fx.ResultTags(`group:"healthz"`)),
		newServer,
	),
	fx.Invoke(func(*Server) {}),
)

type serverParams struct {
	fx.In
	Lifecycle fx.Lifecycle
	Options   Options
	Logger    *zap.Logger
	Healthz   []ports.HealthCheck `group:"healthz"`
	Readyz    []ports.HealthCheck `group:"readyz"`
}

func newServer(p serverParams) (*Server, error) {
	s, err := New(p.Options, p.Healthz, p.Readyz, p.Logger.Named("health"))
	if err != nil {
		return nil, err
	}
	p.Lifecycle.Append(fx.StartStopHook(s.Start, s.Stop))
	return s, nil
}
