package certs_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/fx"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/hexagonal-operator/operator/internal/adapters/certs"
	"github.com/hexagonal-operator/operator/internal/adapters/webhook"
	"github.com/hexagonal-operator/operator/internal/app"
)

const operatorNS = "hexagonal-operator-system"

// clock is a settable time source shared by the replicas of a test.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Set(now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// newFakeClientset is client-go's fake with the API server's optimistic
// concurrency on the objects self mode writes. The fake alone accepts every
// update, so two replicas rotating at once (a watch makes a replica refresh
// as soon as another one writes a bundle) would both win, which no API
// server allows.
func newFakeClientset(objs ...runtime.Object) *fake.Clientset {
	cs := fake.NewClientset(objs...)
	var version atomic.Int64
	next := func() string { return strconv.FormatInt(version.Add(1), 10) }
	for _, gvr := range []schema.GroupVersionResource{
		corev1.SchemeGroupVersion.WithResource("secrets"),
		admissionregistrationv1.SchemeGroupVersion.WithResource("mutatingwebhookconfigurations"),
		admissionregistrationv1.SchemeGroupVersion.WithResource("validatingwebhookconfigurations"),
	} {
		cs.PrependReactor("create", gvr.Resource, func(a k8stesting.Action) (bool, runtime.Object, error) {
			if obj, ok := a.(k8stesting.CreateAction).GetObject().(metav1.Object); ok {
				obj.SetResourceVersion(next())
			}
			return false, nil, nil
		})
		cs.PrependReactor("update", gvr.Resource, func(a k8stesting.Action) (bool, runtime.Object, error) {
			u := a.(k8stesting.UpdateAction)
			obj, ok := u.GetObject().(metav1.Object)
			if !ok {
				return false, nil, nil
			}
			cur, err := cs.Tracker().Get(gvr, u.GetNamespace(), obj.GetName())
			if err != nil {
				return false, nil, nil // the fake answers NotFound itself
			}
			if have := cur.(metav1.Object).GetResourceVersion(); have != obj.GetResourceVersion() {
				return true, nil, apierrors.NewConflict(gvr.GroupResource(), obj.GetName(),
					fmt.Errorf("resourceVersion %q, stored %q", obj.GetResourceVersion(), have))
			}
			obj.SetResourceVersion(next())
			return false, nil, nil
		})
	}
	return cs
}

// podHooks are the rows app.PodWebhooks registers.
func podHooks() []webhook.Hook {
	var table struct {
		fx.In
		Hooks []webhook.Hook `group:"webhooks"`
	}
	if err := fx.New(app.PodWebhooks, fx.NopLogger, fx.Populate(&table)).Err(); err != nil {
		panic(err)
	}
	return table.Hooks
}

func selfOptions() certs.SelfOptions {
	return certs.SelfOptions{
		Namespace:    operatorNS,
		ExtraHosts:   []string{"127.0.0.1"},
		CAValidity:   30 * time.Hour,
		CertValidity: 3 * time.Hour,
		// Tests drive refreshes with Refresh, the loop stays out of the way.
		RefreshInterval: time.Hour,
	}
}

// createWebhookConfigs creates the configurations under their default
// names, as config/default renders them, without a CA bundle.
func createWebhookConfigs(t testing.TB, cs kubernetes.Interface) {
	t.Helper()
	ctx := context.Background()
	svc := webhook.ServiceRef{Namespace: operatorNS, Name: certs.DefaultServiceName}
	_, err := cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx,
		webhook.MutatingWebhookConfiguration(certs.DefaultMutatingWebhookConfiguration, svc, podHooks()), metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx,
		webhook.ValidatingWebhookConfiguration(certs.DefaultValidatingWebhookConfiguration, svc, podHooks()), metav1.CreateOptions{})
	require.NoError(t, err)
}

// bundles returns the caBundle of every webhook in both configurations
// (the default names unless opts names others).
func bundles(t testing.TB, cs kubernetes.Interface, opts ...certs.SelfOptions) [][]byte {
	t.Helper()
	ctx := context.Background()
	mName, vName := certs.DefaultMutatingWebhookConfiguration, certs.DefaultValidatingWebhookConfiguration
	if len(opts) > 0 {
		mName, vName = opts[0].MutatingWebhookConfiguration, opts[0].ValidatingWebhookConfiguration
	}
	m, err := cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, mName, metav1.GetOptions{})
	require.NoError(t, err)
	v, err := cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(ctx, vName, metav1.GetOptions{})
	require.NoError(t, err)
	var out [][]byte
	for _, w := range m.Webhooks {
		out = append(out, w.ClientConfig.CABundle)
	}
	for _, w := range v.Webhooks {
		out = append(out, w.ClientConfig.CABundle)
	}
	return out
}

func startSelf(t testing.TB, cs kubernetes.Interface, opts certs.SelfOptions, c *clock) *certs.SelfIssued {
	t.Helper()
	src, err := certs.NewSelfIssued(opts, cs, zaptest.NewLogger(t, zaptest.Level(zap.InfoLevel)))
	require.NoError(t, err)
	if c != nil {
		src.SetClock(c.Now)
	}
	require.NoError(t, src.Start(context.Background()))
	t.Cleanup(func() { require.NoError(t, src.Stop(context.Background())) })
	return src
}

func leaf(t testing.TB, src *certs.SelfIssued) *x509.Certificate {
	t.Helper()
	c, err := src.GetCertificate(&tls.ClientHelloInfo{})
	require.NoError(t, err)
	require.NotNil(t, c.Leaf)
	return c.Leaf
}

// verifies checks that bundle makes a client trust cert for host at now.
func verifies(t testing.TB, bundle []byte, cert *x509.Certificate, host string, now time.Time) error {
	t.Helper()
	pool := x509.NewCertPool()
	require.True(t, pool.AppendCertsFromPEM(bundle))
	_, err := cert.Verify(x509.VerifyOptions{Roots: pool, DNSName: host, CurrentTime: now})
	return err
}

func TestSelfIssuedCertificates(t *testing.T) {
	t.Parallel()
	cs := newFakeClientset()
	createWebhookConfigs(t, cs)
	c := &clock{now: time.Now()}
	src := startSelf(t, cs, selfOptions(), c)

	sec, err := cs.CoreV1().Secrets(operatorNS).Get(context.Background(), certs.DefaultSecretName, metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, corev1.SecretTypeTLS, sec.Type)
	for _, k := range []string{"tls.crt", "tls.key", "ca.crt", "ca.key"} {
		assert.NotEmpty(t, sec.Data[k], k)
	}

	cert := leaf(t, src)
	assert.ElementsMatch(t, []string{
		"hexagonal-operator-webhook-service",
		"hexagonal-operator-webhook-service.hexagonal-operator-system",
		"hexagonal-operator-webhook-service.hexagonal-operator-system.svc",
		"hexagonal-operator-webhook-service.hexagonal-operator-system.svc.cluster.local",
	}, cert.DNSNames)
	require.Len(t, cert.IPAddresses, 1)
	assert.Equal(t, "127.0.0.1", cert.IPAddresses[0].String())
	bundle := src.CABundle()
	assert.Equal(t, sec.Data["ca.crt"], bundle)
	require.NoError(t, verifies(t, bundle, cert, "hexagonal-operator-webhook-service.hexagonal-operator-system.svc", c.Now()))
	for _, b := range bundles(t, cs) {
		assert.Equal(t, bundle, b, "every webhook trusts the CA")
	}

	t.Run("another replica serves the same certificate", func(t *testing.T) {
		other := startSelf(t, cs, selfOptions(), c)
		assert.True(t, leaf(t, other).Equal(cert))
		assert.Equal(t, bundle, other.CABundle())
	})

	t.Run("a wiped CA bundle is written again", func(t *testing.T) {
		ctx := context.Background()
		m, err := cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, certs.DefaultMutatingWebhookConfiguration, metav1.GetOptions{})
		require.NoError(t, err)
		m.Webhooks[0].ClientConfig.CABundle = nil
		_, err = cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Update(ctx, m, metav1.UpdateOptions{})
		require.NoError(t, err)
		require.NoError(t, src.Refresh(ctx))
		for _, b := range bundles(t, cs) {
			assert.Equal(t, bundle, b)
		}
	})
}

func TestSelfIssuedRotation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cs := newFakeClientset()
	createWebhookConfigs(t, cs)
	t0 := time.Now()
	c := &clock{now: t0}
	src := startSelf(t, cs, selfOptions(), c) // CA 30h, serving certificate 3h
	other := startSelf(t, cs, selfOptions(), c)
	first, firstBundle := leaf(t, src), src.CABundle()
	firstCA := parseBundle(t, firstBundle)[0]
	at := func(d time.Duration) {
		t.Helper()
		c.Set(t0.Add(d))
		require.NoError(t, src.Refresh(ctx))
		require.NoError(t, other.Refresh(ctx))
		assert.True(t, leaf(t, src).Equal(leaf(t, other)), "replicas serve the same certificate")
		assert.Equal(t, src.CABundle(), other.CABundle(), "and trust the same CAs")
		for _, b := range bundles(t, cs) {
			assert.Equal(t, src.CABundle(), b, "webhook configurations trust the bundle")
		}
	}

	// Before two thirds of the serving certificate's life nothing moves.
	at(time.Hour)
	assert.True(t, leaf(t, src).Equal(first))

	// Past two thirds: a new serving certificate from the same CA.
	at(2*time.Hour + time.Minute)
	second := leaf(t, src)
	assert.False(t, second.Equal(first))
	assert.Equal(t, firstBundle, src.CABundle(), "the CA did not change")
	require.NoError(t, second.CheckSignatureFrom(firstCA))
	assert.True(t, second.NotAfter.After(first.NotAfter))

	// Past two thirds of the CA's life the next CA is trusted, but the
	// serving certificate is still signed by the current one: the API
	// server may not have seen the new bundle yet.
	at(19 * time.Hour)
	assert.Len(t, parseBundle(t, src.CABundle()), 1)
	at(20 * time.Hour)
	cas := parseBundle(t, src.CABundle())
	require.Len(t, cas, 2, "current CA plus the next one")
	assert.True(t, cas[0].Equal(firstCA))
	next := cas[1]
	require.NoError(t, leaf(t, src).CheckSignatureFrom(firstCA))

	at(24 * time.Hour)
	require.NoError(t, leaf(t, src).CheckSignatureFrom(firstCA), "not yet: a sixth of a CA lifetime has not passed")
	beforeSwitch := leaf(t, src)

	// A sixth of a CA lifetime later the next CA signs; the old one stays
	// trusted, so a replica that still serves the previous certificate
	// keeps working.
	at(25*time.Hour + 10*time.Minute)
	cas = parseBundle(t, src.CABundle())
	require.Len(t, cas, 2)
	assert.True(t, cas[0].Equal(next), "the next CA comes first")
	assert.True(t, cas[1].Equal(firstCA), "the old CA stays trusted")
	require.NoError(t, leaf(t, src).CheckSignatureFrom(next))
	require.NoError(t, verifies(t, src.CABundle(), beforeSwitch, "hexagonal-operator-webhook-service", c.Now()))

	// Once the old CA expired it leaves the bundle.
	at(30*time.Hour + time.Minute)
	cas = parseBundle(t, src.CABundle())
	require.Len(t, cas, 1)
	assert.True(t, cas[0].Equal(next))
	require.NoError(t, verifies(t, src.CABundle(), leaf(t, src), "hexagonal-operator-webhook-service", c.Now()))
}

func parseBundle(t testing.TB, bundle []byte) []*x509.Certificate {
	t.Helper()
	var out []*x509.Certificate
	for rest := bundle; len(rest) > 0; {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		c, err := x509.ParseCertificate(block.Bytes)
		require.NoError(t, err)
		out = append(out, c)
	}
	return out
}

func TestSelfIssuedRepairsAndWaits(t *testing.T) {
	t.Parallel()
	t.Run("garbage in the secret is replaced", func(t *testing.T) {
		t.Parallel()
		cs := newFakeClientset(&corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: operatorNS, Name: certs.DefaultSecretName},
			Type:       corev1.SecretTypeTLS,
			Data:       map[string][]byte{"tls.crt": []byte("x"), "tls.key": []byte("y")},
		})
		createWebhookConfigs(t, cs)
		src := startSelf(t, cs, selfOptions(), nil)
		sec, err := cs.CoreV1().Secrets(operatorNS).Get(context.Background(), certs.DefaultSecretName, metav1.GetOptions{})
		require.NoError(t, err)
		assert.Equal(t, src.CABundle(), sec.Data["ca.crt"])
		require.NoError(t, verifies(t, src.CABundle(), leaf(t, src), "127.0.0.1", time.Now()))
	})
	t.Run("webhook configurations that appear later get the bundle", func(t *testing.T) {
		t.Parallel()
		cs := newFakeClientset()
		src := startSelf(t, cs, selfOptions(), nil)
		createWebhookConfigs(t, cs)
		require.NoError(t, src.Refresh(context.Background()))
		for _, b := range bundles(t, cs) {
			assert.Equal(t, src.CABundle(), b)
		}
	})
	t.Run("host names are added without dropping the old ones", func(t *testing.T) {
		t.Parallel()
		cs := newFakeClientset()
		createWebhookConfigs(t, cs)
		a := startSelf(t, cs, selfOptions(), nil)
		opts := selfOptions()
		opts.ExtraHosts = []string{"127.0.0.1", "webhook.example.com"}
		b := startSelf(t, cs, opts, nil)
		assert.Contains(t, leaf(t, b).DNSNames, "webhook.example.com")
		for range 3 {
			require.NoError(t, a.Refresh(context.Background()))
			require.NoError(t, b.Refresh(context.Background()))
		}
		assert.True(t, leaf(t, a).Equal(leaf(t, b)), "the first replica picks up the wider certificate instead of issuing its own")
		assert.Contains(t, leaf(t, a).DNSNames, "webhook.example.com")
	})
}

func TestStaleReplicaDoesNotUndoACARotation(t *testing.T) {
	t.Parallel()
	cs := newFakeClientset()
	createWebhookConfigs(t, cs)
	c := &clock{now: time.Now()}
	src := startSelf(t, cs, selfOptions(), c)
	oldBundle := src.CABundle()
	c.Advance(21 * time.Hour)
	require.NoError(t, src.Refresh(context.Background()))
	rotated := src.CABundle()
	require.Len(t, parseBundle(t, rotated), 2)
	// Stopped, so that its watch does not restore the bundles this test
	// writes into the target below.
	require.NoError(t, src.Stop(context.Background()))

	target := certs.MutatingWebhookConfigurationTarget(cs, certs.DefaultMutatingWebhookConfiguration)
	err := target.InjectCABundle(context.Background(), oldBundle)
	require.ErrorContains(t, err, "newer CA")
	for _, b := range bundles(t, cs) {
		assert.Equal(t, rotated, b)
	}
	// A bundle that is not ours (the test harness's CA, a placeholder) is
	// simply replaced.
	foreign, err := certs.NewTestCA()
	require.NoError(t, err)
	ctx := context.Background()
	m, err := cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, certs.DefaultMutatingWebhookConfiguration, metav1.GetOptions{})
	require.NoError(t, err)
	m.Webhooks[0].ClientConfig.CABundle = foreign.CertPEM
	_, err = cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Update(ctx, m, metav1.UpdateOptions{})
	require.NoError(t, err)
	require.NoError(t, target.InjectCABundle(ctx, oldBundle))
	m, err = cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, certs.DefaultMutatingWebhookConfiguration, metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, oldBundle, m.Webhooks[0].ClientConfig.CABundle)
}

func TestSelfIssuedStartsOverAfterTheCAExpired(t *testing.T) {
	t.Parallel()
	cs := newFakeClientset()
	createWebhookConfigs(t, cs)
	c := &clock{now: time.Now()}
	src := startSelf(t, cs, selfOptions(), c)
	oldCA := parseBundle(t, src.CABundle())[0]

	// The operator was away for longer than the CA lives.
	c.Advance(31 * time.Hour)
	require.NoError(t, src.Refresh(context.Background()))
	cas := parseBundle(t, src.CABundle())
	require.Len(t, cas, 1)
	assert.False(t, cas[0].Equal(oldCA))
	require.NoError(t, verifies(t, src.CABundle(), leaf(t, src), "127.0.0.1", c.Now()))
	for _, b := range bundles(t, cs) {
		assert.Equal(t, src.CABundle(), b)
	}
}
