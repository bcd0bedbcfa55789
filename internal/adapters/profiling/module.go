package profiling

import (
	"go.uber.org/fx"
	"go.uber.org/zap"
)

// Module serves the runtime profiles when [Options] ask for them; a taken
// port fails the start, and disabled it listens on nothing.
var Module = fx.Module("profiling",
	fx.Provide(fx.Annotate(newServer, fx.OnStart((*Server).Start), fx.OnStop((*Server).Stop))),
	fx.Invoke(func(*Server) {}),
)

func newServer(opts Options, log *zap.Logger) (*Server, error) {
	return New(opts, log.Named("profiling"))
}
