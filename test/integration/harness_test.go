package integration_test

import (
	"context"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
	"go.uber.org/fx"
	"go.uber.org/goleak"
	"go.uber.org/zap"

	"github.com/hexagonal-operator/operator/internal/adapters/logging"
	"github.com/hexagonal-operator/operator/internal/app"
	"github.com/hexagonal-operator/operator/internal/config"
	"github.com/hexagonal-operator/operator/test/controlplane"
)

func TestMain(m *testing.M) {
	// klog's logger is process-wide and set without a lock: install the
	// operator's switchable sink once, before parallel tests start clients
	// that log, rather than from the first operator's start hook. It stays
	// for the whole process.
	_ = logging.RedirectKlog(zap.NewNop())
	goleak.VerifyTestMain(m,
		// klog's flush daemon and client-go's shared watch machinery live
		// for the process.
		goleak.IgnoreTopFunction("k8s.io/klog/v2.(*flushDaemon).run.func1"),
		goleak.IgnoreAnyFunction("k8s.io/apimachinery/pkg/watch.(*Broadcaster).loop"),
		goleak.IgnoreAnyFunction("k8s.io/client-go/util/workqueue.(*Typed[...]).updateUnfinishedWorkLoop"),
		goleak.IgnoreAnyFunction("net/http.(*persistConn).writeLoop"),
		goleak.IgnoreAnyFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreAnyFunction("internal/poll.runtime_pollWait"),
	)
}

// operatorConfig is the configuration a test runs the operator with: the
// control plane's kubeconfig, every server on a free port, plain metrics.
func operatorConfig(t *testing.T, cp *controlplane.ControlPlane, args ...string) config.Config {
	t.Helper()
	certDir := t.TempDir()
	_, err := cp.IssueServingCert(certDir)
	require.NoError(t, err)
	base := []string{
		"--webhook-cert-dir=" + certDir,
		"--webhook-port=" + strconv.Itoa(freePort(t)),
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

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port
}

// running is a started operator application.
type running struct {
	app      *fx.App
	gatherer prometheus.Gatherer
}

// startOperator starts the application and stops it in t.Cleanup.
func startOperator(t *testing.T, cfg config.Config, opts ...fx.Option) *running {
	t.Helper()
	r := &running{}
	r.app = app.New(cfg, append(opts, fx.Populate(&r.gatherer))...)
	require.NoError(t, r.app.Err())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, r.app.Start(ctx))
	t.Cleanup(func() { r.stop(t) })
	return r
}

func (r *running) stop(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
	defer cancel()
	require.NoError(t, r.app.Stop(ctx))
}

// counter sums the samples of a metric family matching labels.
func (r *running) counter(t *testing.T, name string, labels map[string]string) float64 {
	t.Helper()
	families, err := r.gatherer.Gather()
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

// families lists the metric names the registry exposes.
func (r *running) families(t *testing.T) map[string]bool {
	t.Helper()
	families, err := r.gatherer.Gather()
	require.NoError(t, err)
	out := map[string]bool{}
	for _, f := range families {
		out[f.GetName()] = true
	}
	return out
}
