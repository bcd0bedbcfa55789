package webhook_test

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/fx"
	"go.uber.org/fx/fxtest"
	"go.uber.org/zap"
	admissionv1 "k8s.io/api/admission/v1"

	"github.com/hexagonal-operator/operator/internal/adapters/certs"
	"github.com/hexagonal-operator/operator/internal/adapters/webhook"
	operator "github.com/hexagonal-operator/operator/internal/app"
)

// graph supplies what the composition root gives the module, with the
// webhook certificate in dir.
func graph(opts webhook.Options, dir string, extra ...fx.Option) []fx.Option {
	return append([]fx.Option{
		webhook.Module,
		fx.Supply(opts, zap.NewNop()),
		fx.Provide(
			func() (webhook.CertSource, error) {
				return certs.NewFileSource("webhook", certs.Files{Dir: dir}, 0, certs.NewReads(), zap.NewNop())
			},
			func() prometheus.Registerer { return prometheus.NewRegistry() },
		),
		operator.PodWebhooks,
		fx.NopLogger,
	}, extra...)
}

func TestModuleValidates(t *testing.T) {
	t.Parallel()
	require.NoError(t, fx.ValidateApp(graph(webhook.Options{}, t.TempDir())...))
}

func TestModuleServesAndReportsReadiness(t *testing.T) {
	t.Parallel()
	ca, err := newTestCA()
	require.NoError(t, err)
	dir := t.TempDir()
	writePair(t, dir, issue(t, ca, time.Hour))
	var srv *webhook.Server
	app := fxtest.New(t, graph(webhook.Options{Host: "127.0.0.1", Port: webhook.AnyPort}, dir, fx.Populate(&srv))...)
	ready := srv.ReadinessCheck() // the readiness check the composition root registers
	assert.Equal(t, "webhook", ready.Name())
	require.Error(t, ready.Check(context.Background()), "not ready before start")

	app.RequireStart()
	require.NoError(t, ready.Check(context.Background()))
	f := &fixture{server: srv, ca: ca, client: newClient(ca), base: "https://" + srv.Addr().String()}
	defer f.client.CloseIdleConnections()
	got := f.admit(t, operator.PodMutatePath, podReview(t, "fx", admissionv1.Create, testPod(nil), nil))
	assert.True(t, got.Allowed)
	assert.NotEmpty(t, got.Patch)
	app.RequireStop()
	require.Error(t, ready.Check(context.Background()), "not ready after stop")
}

func TestModuleStartFailsWithoutCertificate(t *testing.T) {
	t.Parallel()
	app := fx.New(graph(webhook.Options{Host: "127.0.0.1", Port: webhook.AnyPort}, t.TempDir())...)
	require.NoError(t, app.Err())
	err := app.Start(context.Background())
	require.ErrorContains(t, err, "webhook certificate: open ")
	require.ErrorContains(t, err, "tls.crt: no such file or directory")
}
