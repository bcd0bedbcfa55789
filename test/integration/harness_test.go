package integration_test

import (
	"testing"

	"go.uber.org/fx"

	"github.com/hexagonal-operator/operator/internal/config"
	"github.com/hexagonal-operator/operator/test/controlplane"
	"github.com/hexagonal-operator/operator/test/operatortest"
)

// TestMain installs the operator's klog sink once and fails the package on
// leaked goroutines, as every package of operators does.
func TestMain(m *testing.M) { operatortest.Main(m) }

// The harness is test/operatortest's, shared with the examples; these are
// the names this package's tests call it by.

// operatorConfig is operatortest.Config: the control plane's kubeconfig,
// every server on a free port, plain metrics, the replicaset controller.
func operatorConfig(t *testing.T, cp *controlplane.ControlPlane, args ...string) config.Config {
	t.Helper()
	return operatortest.Config(t, cp, args...)
}

// running is a started operator application.
type running struct{ *operatortest.Operator }

// startOperator starts the application and stops it in t.Cleanup.
func startOperator(t *testing.T, cfg config.Config, opts ...fx.Option) *running {
	t.Helper()
	return &running{operatortest.Start(t, cfg, opts...)}
}

// stop stops the application before the test ends (once; the cleanup then
// has nothing left to do).
func (r *running) stop(t *testing.T) { r.Stop(t) }

// counter sums the samples of a metric family matching labels.
func (r *running) counter(t *testing.T, name string, labels map[string]string) float64 {
	t.Helper()
	return r.Counter(t, name, labels)
}

// families lists the metric names the registry exposes.
func (r *running) families(t *testing.T) map[string]bool {
	t.Helper()
	return r.Families(t)
}
