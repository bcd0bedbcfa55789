package operatortest

import (
	"context"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
	"go.uber.org/fx"

	"github.com/hexagonal-operator/operator/internal/adapters/webhook"
	"github.com/hexagonal-operator/operator/internal/app"
	"github.com/hexagonal-operator/operator/internal/config"
	"github.com/hexagonal-operator/operator/test/controlplane"
)

// Timeouts of Start and Stop: generous for a loaded CI machine, well
// inside the default test timeout.
const (
	StartTimeout = 30 * time.Second
	StopTimeout  = 25 * time.Second
)

// Config is the configuration a test runs the operator with: the control
// plane's kubeconfig, a serving certificate signed by the control plane's
// CA in a temporary --webhook-cert-dir, the webhook server on a free port,
// metrics, health probes and profiling (when asked for) on any port, plain
// metrics, error-level logs and only the replicaset controller of the
// operator's own (ChaosPods need their CRD). args come after these, so they
// win: "--controllers=" runs none of the operator's own controllers.
func Config(t testing.TB, cp *controlplane.ControlPlane, args ...string) config.Config {
	t.Helper()
	certDir := t.TempDir()
	_, err := cp.IssueServingCert(certDir)
	require.NoError(t, err)
	base := []string{
		"--webhook-cert-dir=" + certDir,
		"--webhook-port=" + strconv.Itoa(FreePort(t)),
		"--kubeconfig=" + cp.KubeconfigPath,
		"--metrics-bind-address=127.0.0.1:0",
		"--metrics-secure=false",
		"--health-probe-bind-address=127.0.0.1:0",
		"--controllers=replicaset",
		"--shutdown-timeout=20s",
		"--zap-log-level=error",
	}
	cfg, err := config.Parse(append(base, args...), func(string) string { return "" })
	require.NoError(t, err)
	return cfg
}

// FreePort is a TCP port on 127.0.0.1 that was free a moment ago, below
// the ephemeral range (controlplane.StablePort), so that no outgoing
// connection of a test running beside takes it before the operator binds.
func FreePort(t testing.TB) int {
	t.Helper()
	port, err := controlplane.StablePort()
	require.NoError(t, err)
	return port
}

// Operator is a started operator application.
type Operator struct {
	// App is the fx application.
	App *fx.App
	// Gatherer reads the operator's metrics registry.
	Gatherer prometheus.Gatherer
	// Hooks is the operator's webhook table: every row its webhook server
	// serves, the operator's own and those added with app.Mutating and
	// app.Validating.
	Hooks []webhook.Hook

	stop    sync.Once
	stopErr error
}

// graph is what Start reads from the application's graph.
type graph struct {
	fx.In
	Gatherer prometheus.Gatherer
	Hooks    []webhook.Hook `group:"webhooks"`
}

// Start builds the application for cfg as main does, with opts last (so
// fx.Replace and fx.Decorate in them win), starts it, and stops it when
// the test ends.
func Start(t testing.TB, cfg config.Config, opts ...fx.Option) *Operator {
	t.Helper()
	op := &Operator{}
	var g graph
	op.App = app.New(cfg, append(slices.Clip(opts), fx.Populate(&g))...)
	require.NoError(t, op.App.Err())
	op.Gatherer, op.Hooks = g.Gatherer, g.Hooks
	ctx, cancel := context.WithTimeout(context.Background(), StartTimeout)
	defer cancel()
	require.NoError(t, op.App.Start(ctx))
	t.Cleanup(func() { op.Stop(t) })
	return op
}

// Stop stops the application, once: a test may stop it early (to hand
// over leadership, say), and the cleanup then has nothing left to do.
func (op *Operator) Stop(t testing.TB) {
	t.Helper()
	op.stop.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), StopTimeout)
		defer cancel()
		op.stopErr = op.App.Stop(ctx)
	})
	require.NoError(t, op.stopErr)
}

// Counter sums the samples of the metric family name whose labels include
// labels: counter and gauge values, and histogram sample counts.
func (op *Operator) Counter(t testing.TB, name string, labels map[string]string) float64 {
	t.Helper()
	families, err := op.Gatherer.Gather()
	require.NoError(t, err)
	var sum float64
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	metrics:
		for _, m := range f.GetMetric() {
			have := map[string]string{}
			for _, l := range m.GetLabel() {
				have[l.GetName()] = l.GetValue()
			}
			for k, v := range labels {
				if have[k] != v {
					continue metrics
				}
			}
			switch {
			case m.GetCounter() != nil:
				sum += m.GetCounter().GetValue()
			case m.GetGauge() != nil:
				sum += m.GetGauge().GetValue()
			case m.GetHistogram() != nil:
				sum += float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return sum
}

// Families lists the metric family names the registry exposes.
func (op *Operator) Families(t testing.TB) map[string]bool {
	t.Helper()
	families, err := op.Gatherer.Gather()
	require.NoError(t, err)
	out := map[string]bool{}
	for _, f := range families {
		out[f.GetName()] = true
	}
	return out
}
