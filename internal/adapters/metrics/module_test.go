package metrics_test

import (
	"net/http"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/fx"
	"go.uber.org/fx/fxtest"
	"go.uber.org/zap"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/hexagonal-operator/operator/internal/adapters/certs"
	"github.com/hexagonal-operator/operator/internal/adapters/metrics"
)

func TestModule(t *testing.T) {
	t.Parallel()
	var (
		reg      *prometheus.Registry
		r        prometheus.Registerer
		g        prometheus.Gatherer
		s        *metrics.Server
		fromPort *metrics.RESTClientMetrics
	)
	app := fxtest.New(t,
		metrics.Module,
		certs.Module,
		fx.Supply(metrics.Options{BindAddress: "127.0.0.1:0"}, certs.Options{WebhookFiles: certs.Files{Dir: t.TempDir()}}, zap.NewNop()),
		fx.Supply(fx.Annotate(fake.NewClientset(), fx.As(new(kubernetes.Interface)))),
		fx.Provide(func(c certs.Certificates) metrics.CertSource { return c.Metrics }), // as the composition root does
		fx.Populate(&reg, &r, &g, &s, &fromPort),
	)
	app.RequireStart()
	defer app.RequireStop()
	assert.Same(t, reg, r)
	assert.Same(t, reg, g)

	c := prometheus.NewCounter(prometheus.CounterOpts{Name: "operator_module_total", Help: "A test counter."})
	require.NoError(t, r.Register(c))
	c.Inc()
	code, body, _ := get(t, http.DefaultClient, "http://"+s.Addr().String()+"/metrics", "")
	assert.Equal(t, http.StatusOK, code)
	assert.Contains(t, body, "operator_module_total 1")
	// controller-runtime's certwatcher counters (the certs module's) are
	// exposed, at zero, even when no certificate file is read.
	assert.Contains(t, body, "\ncertwatcher_read_certificate_total 0\n")
	assert.Contains(t, body, "\ncertwatcher_read_certificate_errors_total 0\n")
}
