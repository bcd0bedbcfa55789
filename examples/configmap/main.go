package main

import (
	"os"

	corev1 "k8s.io/api/core/v1"

	"github.com/hexagonal-operator/operator/examples/configmap/confighash"
	"github.com/hexagonal-operator/operator/internal/app"
)

// confighashController is the whole of the third controller's wiring: the
// reconciler's constructor, and the kind it reconciles, whose reader and
// annotation writer the constructor receives.
var confighashController = app.Controller("confighash", confighash.New,
	app.For[*corev1.ConfigMap](corev1.SchemeGroupVersion.WithResource("configmaps")))

func main() {
	os.Exit(app.Main("configmap", os.Args[1:], os.Getenv, os.Stdout, os.Stderr, confighashController))
}
