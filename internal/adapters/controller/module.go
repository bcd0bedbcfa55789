package controller

import "go.uber.org/fx"

// GroupControllers is the fx value group of the controllers [Module] runs,
// as a result tag for the constructors that join it.
const GroupControllers = `group:"controllers"`

// Module runs the controllers of the group [GroupControllers] that the
// composition root declares; their constructors take [Deps] from the
// graph. Controllers start after what they are built from (caches,
// recorder, elector) and stop before it.
var Module = fx.Module("controller", fx.Invoke(runControllers))

type registerParams struct {
	fx.In
	Controllers []*Controller `group:"controllers"`
}

func runControllers(lc fx.Lifecycle, p registerParams) {
	for _, c := range p.Controllers {
		lc.Append(fx.StartStopHook(c.Start, c.Stop))
	}
}
