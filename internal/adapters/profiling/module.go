package profiling

import (
	"go.uber.org/fx"
	"go.uber.org/zap"
)

// Module serves the runtime profiles when [Options] ask for them; a taken
// port fails the start, and disabled it listens on nothing.
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
