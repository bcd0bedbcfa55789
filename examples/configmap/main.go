package main

import (
	"errors"
	"fmt"
	"os"

	corev1 "k8s.io/api/core/v1"

	"github.com/hexagonal-operator/operator/examples/configmap/confighash"
	"github.com/hexagonal-operator/operator/internal/app"
	"github.com/hexagonal-operator/operator/internal/config"
	"github.com/hexagonal-operator/operator/internal/version"
)

// confighashController is the whole of the third controller's wiring: the
// reconciler's constructor, and the kind it reconciles, whose reader and
// annotation writer the constructor receives.
var confighashController = app.Controller("confighash", confighash.New,
	app.For[*corev1.ConfigMap](corev1.SchemeGroupVersion.WithResource("configmaps")))

func main() {
	cfg, err := config.Parse(os.Args[1:], os.Getenv)
	if errors.Is(err, config.ErrHelp) {
		config.Usage(os.Stdout)
		return
	}
	if err != nil {
		_, _ = fmt.Fprintf(os.Stderr, "configmap: %v\n", err)
		os.Exit(2)
	}
	if cfg.Version {
		_, _ = fmt.Println(version.String())
		return
	}
	// Run starts the operator, stops it on SIGTERM or SIGINT within
	// --shutdown-timeout, and exits non-zero when either fails.
	app.New(cfg, confighashController).Run()
}
