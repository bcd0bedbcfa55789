package app_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/fx"

	"github.com/hexagonal-operator/operator/internal/adapters/health"
	"github.com/hexagonal-operator/operator/internal/adapters/memory"
	"github.com/hexagonal-operator/operator/internal/app"
	"github.com/hexagonal-operator/operator/internal/config"
	"github.com/hexagonal-operator/operator/internal/ports"
)

func parse(t *testing.T, args ...string) config.Config {
	t.Helper()
	cfg, err := config.Parse(args, func(string) string { return "" })
	require.NoError(t, err)
	return cfg
}

// The whole graph resolves for every controller selection, without I/O.
func TestGraphIsComplete(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"--kubeconfig=testdata/kubeconfig"},
		{"--kubeconfig=testdata/kubeconfig", "--controllers=replicaset", "--leader-elect"},
		{"--kubeconfig=testdata/kubeconfig", "--controllers=chaospod", "--namespace=team"},
	} {
		require.NoError(t, fx.ValidateApp(app.Options(parse(t, args...))), "%v", args)
	}
}

// Tests swap adapters through the composition: a decorated port reaches the
// domain.
func TestAdaptersCanBeSwapped(t *testing.T) {
	t.Parallel()
	recorder := memory.NewEventRecorder()
	var got ports.EventRecorder
	a := fx.New(
		app.Options(parse(t, "--kubeconfig=testdata/kubeconfig")),
		fx.Decorate(func(ports.EventRecorder) ports.EventRecorder { return recorder }),
		fx.Populate(&got),
		fx.NopLogger,
	)
	require.NoError(t, a.Err())
	require.Same(t, recorder, got)
}

// The probes serve every part's check: the caches' sync and the webhook
// server for readiness, the elector and each controller for liveness.
func TestProbesServeEveryPartsCheck(t *testing.T) {
	t.Parallel()
	var checks struct {
		fx.In
		Healthz []health.Check `group:"healthz"`
		Readyz  []health.Check `group:"readyz"`
	}
	a := fx.New(app.Options(parse(t, "--kubeconfig=testdata/kubeconfig")), fx.Populate(&checks), fx.NopLogger)
	require.NoError(t, a.Err())
	names := func(cs []health.Check) []string {
		var out []string
		for _, c := range cs {
			out = append(out, c.Name())
		}
		return out
	}
	assert.ElementsMatch(t, []string{"ping", "leader-election", "controller-replicaset", "controller-chaospod"}, names(checks.Healthz))
	assert.ElementsMatch(t, []string{"informers", "webhook"}, names(checks.Readyz))
}
