package health

import (
	"go.uber.org/fx"
	"go.uber.org/zap"
)

// Module serves the probes from the checks of the groups [GroupHealthz]
// and [GroupReadyz] (adding [Ping] to liveness); a taken port fails the
// start. The composition root puts the parts' checks into the groups.
var Module = fx.Module("health",
	fx.Provide(
		fx.Annotate(func() Check { return Ping }, fx.ResultTags(GroupHealthz)),
		newServer,
	),
	fx.Invoke(func(*Server) {}),
)

// Value groups of the checks the server serves, as result tags for the
// constructors that join them: liveness (/healthz: only a restart helps)
// and readiness (/readyz: this replica can serve admission).
const (
	GroupHealthz = `group:"healthz"`
	GroupReadyz  = `group:"readyz"`
)

type serverParams struct {
	fx.In
	Lifecycle fx.Lifecycle
	Options   Options
	Logger    *zap.Logger
	Healthz   []Check `group:"healthz"`
	Readyz    []Check `group:"readyz"`
}

func newServer(p serverParams) (*Server, error) {
	s, err := New(p.Options, p.Healthz, p.Readyz, p.Logger.Named("health"))
	if err != nil {
		return nil, err
	}
	p.Lifecycle.Append(fx.StartStopHook(s.Start, s.Stop))
	return s, nil
}
