package webhook_test

import (
	"crypto/tls"
	"crypto/x509"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/fx"
	"go.uber.org/fx/fxtest"
	"go.uber.org/zap"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/hexagonal-operator/operator/internal/adapters/webhook"
	operator "github.com/hexagonal-operator/operator/internal/app"
	"github.com/hexagonal-operator/operator/internal/lifecycle"
	"github.com/hexagonal-operator/operator/internal/ports"
)

// expiries reads operator_certificate_expiry_timestamp_seconds by use.
func expiries(t testing.TB, g prometheus.Gatherer) map[string]float64 {
	t.Helper()
	families, err := g.Gather()
	require.NoError(t, err)
	out := map[string]float64{}
	for _, mf := range families {
		if mf.GetName() != webhook.CertExpiryMetric {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "use" {
					out[l.GetValue()] = m.GetGauge().GetValue()
				}
			}
		}
	}
	return out
}

// moduleWithRegistry is the module as the composition root wires it, with
// a registry the test reads.
func moduleWithRegistry(t *testing.T, opts webhook.Options, reg *prometheus.Registry, extra ...fx.Option) (*fxtest.App, ports.CertSource) {
	t.Helper()
	var certs ports.CertSource
	app := fxtest.New(t, append([]fx.Option{
		webhook.Module,
		lifecycle.Module,
		fx.Supply(opts, zap.NewNop()),
		fx.Provide(
			func() prometheus.Registerer { return reg },
		),
		operator.PodWebhooks,
		fx.NopLogger,
		fx.Populate(&certs),
	}, extra...)...)
	return app, certs
}

func servedLeaf(t testing.TB, certs ports.CertSource) *x509.Certificate {
	t.Helper()
	c, err := certs.GetCertificate(&tls.ClientHelloInfo{})
	require.NoError(t, err)
	leaf, err := x509.ParseCertificate(c.Certificate[0])
	require.NoError(t, err)
	return leaf
}

func TestCertificateExpiryMetric(t *testing.T) {
	t.Parallel()
	t.Run("external mode: the served file's certificate, and a replacement", func(t *testing.T) {
		t.Parallel()
		ca, err := webhook.NewTestCA()
		require.NoError(t, err)
		dir := t.TempDir()
		writePair(t, dir, issue(t, ca, 40*time.Minute))
		reg := prometheus.NewRegistry()
		app, certs := moduleWithRegistry(t, webhook.Options{Host: "127.0.0.1", Port: webhook.AnyPort, CertDir: dir, CertPollInterval: 20 * time.Millisecond}, reg)
		assert.Empty(t, expiries(t, reg), "no series before a certificate is loaded")
		app.RequireStart()
		defer app.RequireStop()

		first := servedLeaf(t, certs)
		assert.Equal(t, map[string]float64{"webhook": float64(first.NotAfter.Unix())}, expiries(t, reg))

		writePair(t, dir, issue(t, ca, 20*time.Minute))
		require.Eventually(t, func() bool { return !servedLeaf(t, certs).Equal(first) }, 5*time.Second, 10*time.Millisecond)
		second := servedLeaf(t, certs)
		require.NotEqual(t, first.NotAfter.Unix(), second.NotAfter.Unix())
		assert.Equal(t, map[string]float64{"webhook": float64(second.NotAfter.Unix())}, expiries(t, reg))
	})
	t.Run("self mode: the serving certificate and the CA that signs it", func(t *testing.T) {
		t.Parallel()
		cs := fake.NewClientset()
		createWebhookConfigs(t, cs)
		reg := prometheus.NewRegistry()
		app, certs := moduleWithRegistry(t,
			webhook.Options{Host: "127.0.0.1", Port: webhook.AnyPort, CertMode: webhook.CertModeSelf, Self: selfOptions()}, reg,
			fx.Supply(fx.Annotate(cs, fx.As(new(kubernetes.Interface)))))
		app.RequireStart()
		defer app.RequireStop()

		self, ok := certs.(*webhook.SelfCertSource)
		require.True(t, ok)
		leaf := servedLeaf(t, certs)
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
	t.Run("the name is free for the metrics server's own series", func(t *testing.T) {
		t.Parallel()
		reg := prometheus.NewRegistry()
		_, _ = moduleWithRegistry(t, webhook.Options{Host: "127.0.0.1", Port: webhook.AnyPort, CertDir: t.TempDir()}, reg)
		g := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: webhook.CertExpiryMetric, Help: webhook.CertExpiryHelp, ConstLabels: prometheus.Labels{"use": "metrics"},
		}, func() float64 { return 1 })
		require.NoError(t, reg.Register(g))
		assert.Equal(t, map[string]float64{"metrics": 1}, expiries(t, reg))
	})
}
