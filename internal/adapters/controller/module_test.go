package controller_test

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/fx"
	"go.uber.org/fx/fxtest"

	"github.com/hexagonal-operator/operator/internal/adapters/controller"
	"github.com/hexagonal-operator/operator/internal/adapters/health"
	"github.com/hexagonal-operator/operator/internal/ports"
)

func moduleOptions(e *env, src *fakeSource, r ports.Reconciler, checks *[]health.Check) fx.Option {
	return fx.Options(
		fx.Supply(
			e.deps.Logger,
			fx.Annotate(e.reg, fx.As(new(prometheus.Registerer))),
			fx.Annotate(e.leader, fx.As(new(controller.LeaderElector))),
		),
		controller.Module,
		fx.Provide(fx.Annotate(func(d controller.Deps) (*controller.Controller, error) {
			return newController("things", d, 1, r, forSource(src))
		}, fx.ResultTags(controller.GroupControllers))),
		// The liveness checks the composition root registers.
		fx.Invoke(fx.Annotate(func(cs []*controller.Controller) {
			for _, c := range cs {
				*checks = append(*checks, c.StuckCheck())
			}
		}, fx.ParamTags(controller.GroupControllers))),
		fx.NopLogger,
	)
}

func TestModuleRunsProvidedControllers(t *testing.T) {
	t.Parallel()
	e := newEnv()
	src := newSource("Thing")
	r := newRecorder(nil)
	var checks []health.Check

	require.NoError(t, fx.ValidateApp(moduleOptions(e, src, r, &checks)))

	app := fxtest.New(t, moduleOptions(e, src, r, &checks))
	require.Len(t, checks, 1)
	assert.Equal(t, "controller-things", checks[0].Name())
	assert.Empty(t, src.registered(), "nothing registered before the app starts")

	app.RequireStart()
	src.add(object("ns", "a"))
	require.Eventually(t, func() bool { return r.count(req("ns", "a")) == 1 }, waitFor, tick)
	assert.NoError(t, checks[0].Check(t.Context()))
	app.RequireStop()
}
