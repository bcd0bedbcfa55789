package main

import (
	"testing"

	"github.com/hexagonal-operator/operator/test/operatortest"
)

// config/ is what `greeting manifests` renders, as `make manifests` runs
// it: the example's controller alone (--controllers=). The CRD itself
// comes from controller-gen, not from the wiring.
func TestConfigIsWhatTheWiringNeeds(t *testing.T) {
	t.Parallel()
	operatortest.RequireGeneratedConfig(t, "greeting", "config", greetings, "--controllers=")
}
