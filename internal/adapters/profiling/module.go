package profiling

import (
	"go.uber.org/fx"
	"go.uber.org/zap"

	"github.com/hexagonal-operator/operator/internal/lifecycle"
)

// Module serves the runtime profiles when [Options] ask for them.
//
// It consumes an [Options] and a *zap.Logger and provides *Server, run in
// the phase lifecycle.Probes (a taken port fails the start). Disabled, it
// listens on nothing.
var Module = fx.Module("profiling",
	fx.Provide(newServer),
	lifecycle.Register[*Server]("profiling", lifecycle.Probes),
)

func newServer(opts Options, log *zap.Logger) (*Server, error) {
	return New(opts, log.Named("profiling"))
}
