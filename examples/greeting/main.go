package main

import (
	"errors"
	"fmt"
	"os"

	"go.uber.org/fx"

	greetingv1 "github.com/hexagonal-operator/operator/examples/greeting/api/v1"
	"github.com/hexagonal-operator/operator/examples/greeting/greeting"
	"github.com/hexagonal-operator/operator/internal/app"
	"github.com/hexagonal-operator/operator/internal/config"
	"github.com/hexagonal-operator/operator/internal/version"
)

// greetings is the whole of the Greeting kind's wiring: its controller,
// whose reconciler gets the kind's reader and writer, and its two
// admission rules, served at kubebuilder's paths.
var greetings = fx.Options(
	app.Controller("greeting", greeting.NewReconciler, app.For[*greetingv1.Greeting](greetingv1.Resource)),
	app.Mutating[greetingv1.Greeting](greetingv1.Resource, greeting.NewDefaulter),
	app.Validating[greetingv1.Greeting](greetingv1.Resource, greeting.NewValidator),
)

func main() {
	cfg, err := config.Parse(os.Args[1:], os.Getenv)
	if errors.Is(err, config.ErrHelp) {
		config.Usage(os.Stdout)
		return
	}
	if err != nil {
		_, _ = fmt.Fprintf(os.Stderr, "greeting: %v\n", err)
		os.Exit(2)
	}
	if cfg.Version {
		_, _ = fmt.Println(version.String())
		return
	}
	// Run starts the operator, stops it on SIGTERM or SIGINT within
	// --shutdown-timeout, and exits non-zero when either fails.
	app.New(cfg, greetings).Run()
}
