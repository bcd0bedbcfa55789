package cache

import (
	"go.uber.org/fx"
)

// Module provides the *Cache; the composition root builds a [Resource] for
// each kind it reads or watches. The informers start with the application
// (Start returns at once) and stop within the stop context.
var Module = fx.Module("cache",
	fx.Provide(fx.Annotate(New, fx.OnStart((*Cache).Start), fx.OnStop((*Cache).Stop))),
)
