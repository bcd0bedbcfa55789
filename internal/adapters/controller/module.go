package controller

import (
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/fx"
	"go.uber.org/zap"

	"github.com/hexagonal-operator/operator/internal/lifecycle"
	"github.com/hexagonal-operator/operator/internal/ports"
)

// GroupControllers is the fx value group of the controllers [Module] runs,
// as a result tag for the constructors that join it.
const GroupControllers = `group:"controllers"`

// Module runs the controllers that the composition root declares; which
// controllers exist is the root's decision, not this package's.
//
// It consumes *zap.Logger, prometheus.Registerer, ports.LeaderElector and,
// optionally, an [Options] (the defaults otherwise). It provides [Deps],
// for the root's controller constructors, and for every *Controller of the
// group [GroupControllers]: its [Controller.StuckCheck] in the group
// "healthz" (liveness) and a lifecycle.Part in the phase
// lifecycle.Controllers, so controllers start after, and stop before, the
// caches and the leader elector they depend on.
var Module = fx.Module("controller",
	fx.Provide(newDeps, registerControllers),
)

type registerParams struct {
	fx.In
	Controllers []*Controller `group:"controllers"`
}

type registered struct {
	fx.Out
	Checks []ports.HealthCheck `group:"healthz,flatten"`
	Parts  []lifecycle.Part    `group:"lifecycle,flatten"`
}

func registerControllers(p registerParams) registered {
	var out registered
	for _, c := range p.Controllers {
		out.Checks = append(out.Checks, c.StuckCheck())
		out.Parts = append(out.Parts, lifecycle.Part{
			Name: "controller-" + c.Name(), Phase: lifecycle.Controllers, Start: c.Start, Stop: c.Stop,
		})
	}
	return out
}

type depsParams struct {
	fx.In
	Logger        *zap.Logger
	Registerer    prometheus.Registerer
	LeaderElector ports.LeaderElector
	Options       Options `optional:"true"`
}

func newDeps(p depsParams) Deps {
	return Deps{
		Logger:        p.Logger.Named("controller"),
		Registerer:    p.Registerer,
		LeaderElector: p.LeaderElector,
		Options:       p.Options,
	}
}
