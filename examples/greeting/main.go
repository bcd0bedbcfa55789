package main

import (
	"os"

	"go.uber.org/fx"
	corev1 "k8s.io/api/core/v1"

	greetingv1 "github.com/hexagonal-operator/operator/examples/greeting/api/v1"
	"github.com/hexagonal-operator/operator/examples/greeting/greeting"
	"github.com/hexagonal-operator/operator/internal/app"
)

// greetings is the whole of the Greeting kind's wiring: its controller,
// whose reconciler gets the readers and writers of Greetings and of the
// ConfigMaps they own, and its two admission rules, served at
// kubebuilder's paths.
var greetings = fx.Options(
	app.Controller("greeting", greeting.NewReconciler,
		app.For[*greetingv1.Greeting](greetingv1.Resource, app.Writes(app.UpdateStatus)),
		app.Owns[*corev1.ConfigMap](corev1.SchemeGroupVersion.WithResource("configmaps"), app.Writes(app.Create, app.Update))),
	app.Mutating[greetingv1.Greeting](greetingv1.Resource, greeting.NewDefaulter),
	app.Validating[greetingv1.Greeting](greetingv1.Resource, greeting.NewValidator),
)

func main() {
	os.Exit(app.Main("greeting", os.Args[1:], os.Getenv, os.Stdout, os.Stderr, greetings))
}
