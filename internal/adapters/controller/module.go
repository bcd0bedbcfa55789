package controller

import (
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/fx"
	"go.uber.org/zap"
)

// GroupControllers is the fx value group of the controllers [Module] runs,
// as a result tag for the constructors that join it.
const GroupControllers = `group:"controllers"`

// Module runs the controllers of the group [GroupControllers] that the
// composition root declares, and provides their [Deps]. Controllers start
// after what they are built from (caches, recorder, elector) and stop
// before it.
var Module = fx.Module("controller",
	fx.Provide(newDeps),
	fx.Invoke(runControllers),
)

type registerParams struct {
	fx.In
	Controllers []*Controller `group:"controllers"`
}

// runControllers starts the controllers after what they were built from
// (their caches, recorder and elector start first, being built first) and
// stops them before it.
func runControllers(lc fx.Lifecycle, p registerParams) {
	for _, c := range p.Controllers {
		lc.Append(fx.StartStopHook(c.Start, c.Stop))
	}
}

type depsParams struct {
	fx.In
	Logger        *zap.Logger
	Registerer    prometheus.Registerer
	LeaderElector LeaderElector
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
