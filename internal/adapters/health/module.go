package health

import (
	"go.uber.org/fx"
	"go.uber.org/zap"

	"github.com/hexagonal-operator/operator/internal/lifecycle"
	"github.com/hexagonal-operator/operator/internal/ports"
)

// Module serves the probes.
//
// It consumes an [Options], a *zap.Logger and the ports.HealthCheck values
// of the groups "healthz" (liveness) and "readyz" (readiness); it adds
// [Ping] to "healthz". It provides *Server, run in the phase
// lifecycle.Probes (a taken port fails the start). Any module adds a check
// with
//
//	fx.Annotate(newCheck, fx.ResultTags(lifecycle.GroupReadyz))
var Module = fx.Module("health",
	fx.Provide(
		fx.Annotate(func() ports.HealthCheck { return Ping }, fx.ResultTags(lifecycle.GroupHealthz)),
		newServer,
	),
	lifecycle.Register[*Server]("health", lifecycle.Probes),
)

type serverParams struct {
	fx.In
	Options Options
	Logger  *zap.Logger
	Healthz []ports.HealthCheck `group:"healthz"`
	Readyz  []ports.HealthCheck `group:"readyz"`
}

func newServer(p serverParams) (*Server, error) {
	return New(p.Options, p.Healthz, p.Readyz, p.Logger.Named("health"))
}
