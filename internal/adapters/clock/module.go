package clock

import (
	"go.uber.org/fx"

	"github.com/hexagonal-operator/operator/internal/ports"
)

// Module provides ports.Clock with the wall clock. Tests replace it with
// memory.Clock through fx.Replace or fx.Decorate.
var Module = fx.Module("clock",
	fx.Provide(fx.Annotate(New, fx.As(new(ports.Clock)))),
)
