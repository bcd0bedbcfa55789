package controller

import (
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/fx"
	"go.uber.org/zap"

	"github.com/hexagonal-operator/operator/internal/ports"
)

// GroupControllers is the fx value group of the controllers [Module] runs.
const GroupControllers = `group:"controllers"`

// Module runs the controllers that the composition root declares; which
// controllers exist is the root's decision, not this package's.
//
// It consumes *zap.Logger, prometheus.Registerer, ports.CacheSync,
// ports.LeaderElector and, optionally, an [Options] (the defaults
// otherwise). It provides:
//
//   - [Deps], for the root's controller constructors;
//   - every controller's [Controller.StuckCheck] into the value group
//     "healthz" (liveness);
//
// and hooks every *Controller of the value group "controllers" (see
// [Provide]) into the lifecycle: Start in OnStart (which returns at once),
// Stop in OnStop, bounded by the stop context. Controllers start after, and
// stop before, the caches and the leader elector they depend on.
var Module = fx.Module("controller",
	fx.Provide(
		newDeps,
		fx.Annotate(stuckChecks,
			fx.ParamTags(GroupControllers),
			fx.ResultTags(`group:"healthz,flatten"`)),
	),
	fx.Invoke(fx.Annotate(hookAll, fx.ParamTags(``, GroupControllers))),
)

// Provide adds the *Controller that constructor returns to the group that
// [Module] runs. constructor is an ordinary fx constructor, typically built
// on [Deps] and a [Builder]:
//
//	controller.Provide(func(d controller.Deps, rs, pods ports.Source, r ports.Reconciler) (*controller.Controller, error) {
//		return controller.NewBuilder("replicaset", d).For(rs).Owns(pods, rsKind).Complete(r)
//	})
//
// Parameters that need names (`name:"pod"`) are given with fx.Annotate
// before passing the constructor in.
func Provide(constructor any) fx.Option {
	return fx.Provide(fx.Annotate(constructor, fx.ResultTags(GroupControllers)))
}

// Hook ties c's Start and Stop to lc. Module does this for the group; Hook
// is for wiring a controller by hand (fx.Invoke(controller.Hook)).
func Hook(lc fx.Lifecycle, c *Controller) {
	lc.Append(fx.StartStopHook(c.Start, c.Stop))
}

type depsParams struct {
	fx.In
	Logger        *zap.Logger
	Registerer    prometheus.Registerer
	CacheSync     ports.CacheSync
	LeaderElector ports.LeaderElector
	Options       Options `optional:"true"`
}

func newDeps(p depsParams) Deps {
	return Deps{
		Logger:        p.Logger.Named("controller"),
		Registerer:    p.Registerer,
		CacheSync:     p.CacheSync,
		LeaderElector: p.LeaderElector,
		Options:       p.Options,
	}
}

func stuckChecks(cs []*Controller) []ports.HealthCheck {
	checks := make([]ports.HealthCheck, 0, len(cs))
	for _, c := range cs {
		checks = append(checks, c.StuckCheck())
	}
	return checks
}

func hookAll(lc fx.Lifecycle, cs []*Controller) {
	for _, c := range cs {
		Hook(lc, c)
	}
}
