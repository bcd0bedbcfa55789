package apptest

import (
	"testing"

	"go.uber.org/dig"
	"go.uber.org/fx"
	"k8s.io/client-go/rest"

	"github.com/hexagonal-operator/operator/internal/app"
	"github.com/hexagonal-operator/operator/internal/config"
)

// Host is the API server of the *rest.Config [New] gives the graph. The
// .invalid domain never resolves, so a client that tries it fails at once
// rather than reaching whatever cluster the machine's kubeconfig names.
const Host = "https://apptest.invalid"

// Config is the operator's configuration for args, its flags, with an
// empty environment: $KUBECONFIG and the OPERATOR_* variables of the
// machine running the test play no part. A flag Parse refuses fails t.
func Config(t testing.TB, args ...string) config.Config {
	t.Helper()
	cfg, err := config.Parse(args, func(string) string { return "" })
	if err != nil {
		t.Fatalf("apptest: flags %q: %v", args, err)
	}
	return cfg
}

// New is the application app.New builds for cfg, not started: building
// the graph does no I/O, starting it would need an API server. The graph's
// *rest.Config is a fresh one for [Host], given with fx.Replace so that no
// kubeconfig is read; opts come last, so an fx.Decorate, fx.Replace or
// fx.Populate in them wins over the operator's wiring. They cannot decorate
// or replace *rest.Config again: fx allows one per module. A graph that
// does not build fails t with dig's root cause, the constructor's own
// error rather than the chain of what needed it.
func New(t testing.TB, cfg config.Config, opts ...fx.Option) *fx.App {
	t.Helper()
	a := app.New(cfg, append([]fx.Option{
		fx.Replace(&rest.Config{Host: Host}),
		fx.NopLogger,
	}, opts...)...)
	if err := a.Err(); err != nil {
		t.Fatalf("apptest: the application does not build: %v", dig.RootCause(err))
	}
	return a
}
