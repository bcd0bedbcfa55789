package profiling

import (
	"go.uber.org/fx"
	"go.uber.org/zap"
)

// Module serves the runtime profiles when [Options] ask for them.
//
// It consumes an [Options] and a *zap.Logger and provides *Server,
// listening in OnStart (a taken port fails the start) and shutting down in
// OnStop. Disabled, it listens on nothing.
var Module = fx.Module("profiling",
	fx.Provide(newServer),
	fx.Invoke(func(*Server) {}),
)

func newServer(lc fx.Lifecycle, opts Options, log *zap.Logger) (*Server, error) {
	s, err := New(opts, log.Named("profiling"))
	if err != nil {
		return nil, err
	}
	lc.Append(fx.StartStopHook(s.Start, s.Stop))
	return s, nil
}
