package certs_test

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/fx"
	"go.uber.org/zap"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/hexagonal-operator/operator/internal/adapters/certs"
)

// expiries reads operator_certificate_expiry_timestamp_seconds by use.
func expiries(t testing.TB, g prometheus.Gatherer) map[string]float64 {
	t.Helper()
	families, err := g.Gather()
	require.NoError(t, err)
	out := map[string]float64{}
	for _, mf := range families {
		if mf.GetName() != "operator_certificate_expiry_timestamp_seconds" {
			continue
		}
		for _, m := range mf.GetMetric() {
			out[m.GetLabel()[0].GetValue()] = m.GetGauge().GetValue()
		}
	}
	return out
}

// module builds the module as the composition root wires it, with cs as
// the clientset.
func module(t *testing.T, opts certs.Options, cs kubernetes.Interface) (certs.Certificates, *prometheus.Registry) {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	var c certs.Certificates
	app := fx.New(
		certs.Module,
		fx.Supply(opts, zap.NewNop(), fx.Annotate(cs, fx.As(new(kubernetes.Interface)))),
		fx.Provide(func() prometheus.Registerer { return reg }),
		fx.NopLogger,
		fx.Populate(&c),
	)
	require.NoError(t, app.Err())
	return c, reg
}

func start(t *testing.T, s certs.Source) {
	t.Helper()
	require.NoError(t, s.Start(context.Background()))
	t.Cleanup(func() { require.NoError(t, s.Stop(context.Background())) })
}

func TestModule(t *testing.T) {
	t.Parallel()
	t.Run("external webhook files, self-signed metrics: expiry once loaded, and a replacement", func(t *testing.T) {
		t.Parallel()
		ca, err := certs.NewTestCA()
		require.NoError(t, err)
		dir := t.TempDir()
		writePair(t, dir, issue(t, ca, 40*time.Minute))
		c, reg := module(t, certs.Options{WebhookFiles: certs.Files{Dir: dir}, PollInterval: 20 * time.Millisecond}, fake.NewClientset())
		require.IsType(t, &certs.FileSource{}, c.Webhook)
		require.IsType(t, &certs.SelfSigned{}, c.Metrics)
		assert.Empty(t, expiries(t, reg), "no series before a certificate is loaded")
		// certwatcher's counters exist, at zero, before any read.
		n, err := testutil.GatherAndCount(reg, "certwatcher_read_certificate_total", "certwatcher_read_certificate_errors_total")
		require.NoError(t, err)
		assert.Equal(t, 2, n)

		start(t, c.Webhook)
		first := served(t, c.Webhook)
		assert.Equal(t, map[string]float64{"webhook": float64(first.NotAfter.Unix())}, expiries(t, reg))
		start(t, c.Metrics)
		assert.Equal(t, float64(served(t, c.Metrics).NotAfter.Unix()), expiries(t, reg)["metrics"])

		writePair(t, dir, issue(t, ca, 20*time.Minute))
		require.Eventually(t, func() bool { return !served(t, c.Webhook).Equal(first) }, 5*time.Second, 10*time.Millisecond)
		second := served(t, c.Webhook)
		require.NotEqual(t, first.NotAfter.Unix(), second.NotAfter.Unix())
		assert.Equal(t, float64(second.NotAfter.Unix()), expiries(t, reg)["webhook"])
	})
	t.Run("self mode: the serving certificate and the CA that signs it", func(t *testing.T) {
		t.Parallel()
		cs := newFakeClientset()
		createWebhookConfigs(t, cs)
		c, reg := module(t, certs.Options{WebhookMode: certs.ModeSelf, Self: selfOptions()}, cs)
		start(t, c.Webhook)
		self, ok := c.Webhook.(*certs.SelfIssued)
		require.True(t, ok)
		for _, b := range bundles(t, cs) {
			assert.Equal(t, self.CABundle(), b)
		}
		leaf := served(t, c.Webhook)
		signer := parseBundle(t, self.CABundle())[0]
		require.NoError(t, leaf.CheckSignatureFrom(signer))
		assert.Equal(t, map[string]float64{
			"webhook":    float64(leaf.NotAfter.Unix()),
			"webhook-ca": float64(signer.NotAfter.Unix()),
		}, expiries(t, reg))
		// selfOptions: the CA lives 30 hours, the serving certificate 3.
		assert.InDelta(t, time.Now().Add(3*time.Hour).Unix(), expiries(t, reg)["webhook"], 3700)
		assert.InDelta(t, time.Now().Add(30*time.Hour).Unix(), expiries(t, reg)["webhook-ca"], 3700)
	})
	t.Run("metrics files", func(t *testing.T) {
		t.Parallel()
		c, _ := module(t, certs.Options{WebhookFiles: certs.Files{Dir: t.TempDir()}, MetricsFiles: certs.Files{Dir: t.TempDir()}}, fake.NewClientset())
		require.IsType(t, &certs.FileSource{}, c.Metrics)
		require.ErrorContains(t, c.Metrics.Start(context.Background()), "tls.crt")
	})
	t.Run("bad options", func(t *testing.T) {
		t.Parallel()
		for opts, want := range map[*certs.Options]string{
			{WebhookMode: "magic"}:            `certificate mode "magic"`,
			{WebhookMode: certs.ModeSelf}:     "operator's namespace",
			{WebhookMode: certs.ModeExternal}: "no certificate folder",
		} {
			app := fx.New(certs.Module, fx.Supply(*opts, zap.NewNop(), fx.Annotate(fake.NewClientset(), fx.As(new(kubernetes.Interface)))),
				fx.Provide(func() prometheus.Registerer { return prometheus.NewRegistry() }), fx.NopLogger, fx.Invoke(func(certs.Certificates) {}))
			require.ErrorContains(t, app.Err(), want)
		}
	})
}
