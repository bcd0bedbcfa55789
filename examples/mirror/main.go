package main

import (
	"os"

	"go.uber.org/fx"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hexagonal-operator/operator/examples/mirror/mirror"
	"github.com/hexagonal-operator/operator/internal/adapters/controller/predicate"
	"github.com/hexagonal-operator/operator/internal/app"
)

var configMaps = corev1.SchemeGroupVersion.WithResource("configmaps")

// labelled passes the events of ConfigMaps that ask for a mirror, and the
// updates whose old object did: removing the label must reach the
// reconciler, which then deletes the mirror. Mirrors carry no label, so
// they are never mirrored.
var labelled = predicate.Funcs{
	CreateFunc: mirror.Labelled,
	UpdateFunc: func(oldObj, newObj metav1.Object) bool { return mirror.Labelled(oldObj) || mirror.Labelled(newObj) },
	DeleteFunc: mirror.Labelled,
}

// mirrors is the whole of the example's wiring. The controller reconciles
// ConfigMaps and owns ConfigMaps: both watches would offer the reconciler
// their reader and writer, so Owns is WatchOnly and only enqueues a
// mirror's source. The rule is sent labelled ConfigMaps only, so it never
// holds up, nor fails closed for, anyone else's.
var mirrors = fx.Options(
	app.Controller("mirror", mirror.NewReconciler,
		app.For[*corev1.ConfigMap](configMaps, app.WithPredicates(labelled), app.Writes(app.Create, app.Update, app.Delete)),
		app.Owns[*corev1.ConfigMap](configMaps, app.WatchOnly())),
	app.Validating[corev1.ConfigMap](configMaps, mirror.NewValidator,
		app.ObjectSelector(&metav1.LabelSelector{MatchLabels: map[string]string{mirror.Label: "true"}})),
)

func main() {
	os.Exit(app.Main("mirror", os.Args[1:], os.Getenv, os.Stdout, os.Stderr, mirrors))
}
