package main

import (
	"os"

	corev1 "k8s.io/api/core/v1"

	"github.com/hexagonal-operator/operator/examples/configmap/confighash"
	"github.com/hexagonal-operator/operator/internal/app"
)

// confighashController is the whole of the third controller's wiring: the
// reconciler's constructor, and the kind it reconciles, whose reader and
// writer the constructor receives; the writer patches metadata only, which
// is all its RBAC grants.
var confighashController = app.Controller("confighash", confighash.New,
	app.For[*corev1.ConfigMap](corev1.SchemeGroupVersion.WithResource("configmaps"), app.Writes(app.PatchMetadata)))

func main() {
	os.Exit(app.Main("configmap", os.Args[1:], os.Getenv, os.Stdout, os.Stderr, confighashController))
}
