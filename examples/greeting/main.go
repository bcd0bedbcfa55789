package main

import (
	"os"

	"go.uber.org/fx"

	greetingv1 "github.com/hexagonal-operator/operator/examples/greeting/api/v1"
	"github.com/hexagonal-operator/operator/examples/greeting/greeting"
	"github.com/hexagonal-operator/operator/internal/app"
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
	os.Exit(app.Main("greeting", os.Args[1:], os.Getenv, os.Stdout, os.Stderr, greetings))
}
