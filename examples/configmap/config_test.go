package main

import (
	"testing"

	"github.com/hexagonal-operator/operator/test/operatortest"
)

// config/ is what `configmap manifests` renders, as `make manifests` runs
// it: the example's controller alone (--controllers=).
func TestConfigIsWhatTheWiringNeeds(t *testing.T) {
	t.Parallel()
	operatortest.RequireGeneratedConfig(t, "configmap", "config", confighashController, "--controllers=")
}
