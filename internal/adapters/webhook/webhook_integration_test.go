package webhook_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zaptest"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"

	"github.com/hexagonal-operator/operator/internal/adapters/certs"
	"github.com/hexagonal-operator/operator/internal/adapters/webhook"
	"github.com/hexagonal-operator/operator/internal/app"
	"github.com/hexagonal-operator/operator/internal/domain/admission"
	"github.com/hexagonal-operator/operator/test/controlplane"
)

func repoPath(t testing.TB, rel string) string {
	t.Helper()
	root, err := controlplane.RepoRoot()
	require.NoError(t, err)
	return filepath.Join(root, rel)
}

// newServer is a server for the Pod hooks on a free loopback port, stopped
// when the test ends.
func newServer(t testing.TB, src certs.Source, reg prometheus.Registerer) *webhook.Server {
	t.Helper()
	srv, err := webhook.New(webhook.Options{Host: "127.0.0.1", Port: webhook.AnyPort}, src, podHooks(), reg, zaptest.NewLogger(t))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, srv.Stop(context.Background())) })
	return srv
}

func userPod(namespace, name string, annotations map[string]string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, GenerateName: "load-", Annotations: annotations},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.example/app:1"}}},
	}
}

var dryRun = metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}

// waitForWebhooks waits until the API server calls the mutating webhook:
// it learns about new configurations through a watch, a moment later.
func waitForWebhooks(t testing.TB, cs kubernetes.Interface, namespace string) {
	t.Helper()
	var last error
	require.Eventually(t, func() bool {
		pod, err := cs.CoreV1().Pods(namespace).Create(context.Background(), userPod(namespace, "", nil), dryRun)
		last = err
		return err == nil && pod.Annotations[admission.PodAnnotationKey] == admission.PodAnnotationValue
	}, 60*time.Second, 50*time.Millisecond, "the API server never called the webhook (last error: %v)", last)
}

func TestPodAdmissionThroughTheAPIServer(t *testing.T) {
	t.Parallel()
	cp := controlplane.StartT(t, controlplane.Options{})
	ctx := context.Background()
	cs := cp.Clientset()

	dir := t.TempDir()
	_, err := cp.IssueServingCert(dir)
	require.NoError(t, err)
	reg := prometheus.NewRegistry()
	srv := newServer(t, fileSource(t, dir, time.Second, zaptest.NewLogger(t)), reg)
	require.NoError(t, srv.Start(ctx))

	_, err = cp.InstallWebhooks(ctx, repoPath(t, "config/webhook"), controlplane.WebhookServer{Host: srv.Addr().String(), CABundle: cp.CACert()})
	require.NoError(t, err)
	for _, ns := range []string{"apps", app.OperatorNamespace} {
		require.NoError(t, cp.EnsureNamespace(ctx, ns))
	}
	waitForWebhooks(t, cs, "apps")

	t.Run("a created Pod gets the annotation and keeps its others", func(t *testing.T) {
		pod, err := cs.CoreV1().Pods("apps").Create(ctx, userPod("apps", "web", map[string]string{"team": "a"}), metav1.CreateOptions{})
		require.NoError(t, err)
		assert.Equal(t, map[string]string{"team": "a", admission.PodAnnotationKey: "foo"}, pod.Annotations)
	})
	t.Run("an update that removes the annotation gets it back", func(t *testing.T) {
		pod, err := cs.CoreV1().Pods("apps").Get(ctx, "web", metav1.GetOptions{})
		require.NoError(t, err)
		pod.Annotations = map[string]string{"team": "b"}
		pod, err = cs.CoreV1().Pods("apps").Update(ctx, pod, metav1.UpdateOptions{})
		require.NoError(t, err)
		assert.Equal(t, map[string]string{"team": "b", admission.PodAnnotationKey: "foo"}, pod.Annotations)
	})
	t.Run("system and operator namespaces are untouched", func(t *testing.T) {
		for _, ns := range []string{"kube-system", app.OperatorNamespace} {
			pod, err := cs.CoreV1().Pods(ns).Create(ctx, userPod(ns, "untouched", map[string]string{"team": "a"}), metav1.CreateOptions{})
			require.NoError(t, err, "creation in %s is not blocked", ns)
			assert.Equal(t, map[string]string{"team": "a"}, pod.Annotations, ns)
		}
	})
	t.Run("the server saw the API server's requests", func(t *testing.T) {
		got := gather(t, reg)
		assert.Positive(t, got[`controller_runtime_webhook_requests_total{code="200",webhook="/mutate--v1-pod"}`])
		assert.Positive(t, got[`controller_runtime_webhook_requests_total{code="200",webhook="/validate--v1-pod"}`])
	})
	t.Run("a denial reaches the client as an API error with the documented message", func(t *testing.T) {
		// Without the mutator, the validator has something to deny.
		require.NoError(t, cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Delete(ctx, "mutating-webhook-configuration", metav1.DeleteOptions{}))
		var err error
		require.Eventually(t, func() bool {
			_, err = cs.CoreV1().Pods("apps").Create(ctx, userPod("apps", "", nil), dryRun)
			return err != nil
		}, 60*time.Second, 50*time.Millisecond)
		assert.True(t, apierrors.IsForbidden(err), "%v", err)
		assert.Contains(t, err.Error(), `admission webhook "pod-validator.hexagonal-operator.io" denied the request`)
		assert.Contains(t, err.Error(), "missing annotation example-mutating-admission-webhook")

		_, err = cs.CoreV1().Pods("apps").Create(ctx, userPod("apps", "", map[string]string{admission.PodAnnotationKey: "bar"}), dryRun)
		require.Error(t, err)
		assert.Contains(t, err.Error(), `did not have value "foo"`)

		_, err = cs.CoreV1().Pods("apps").Create(ctx, userPod("apps", "", map[string]string{admission.PodAnnotationKey: "foo"}), dryRun)
		require.NoError(t, err)
	})
}

// The manifests as config/default deploys them: prefixed names, the
// operator's namespace, and selector values that kustomize left alone.
func TestRenderedWebhookManifests(t *testing.T) {
	t.Parallel()
	overlay := t.TempDir()
	base, err := filepath.Rel(overlay, repoPath(t, "config/webhook"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(overlay, "kustomization.yaml"), []byte(
		"namespace: hexagonal-operator-system\nnamePrefix: hexagonal-operator-\nresources:\n- "+base+"\n"), 0o600))
	objs, err := controlplane.Manifests(overlay)
	require.NoError(t, err)

	byKind := map[string]*unstructured.Unstructured{}
	for _, o := range objs {
		byKind[o.GetKind()] = o
	}
	require.Len(t, byKind, 3)
	assert.Equal(t, certs.DefaultServiceName, byKind["Service"].GetName())
	assert.Equal(t, app.OperatorNamespace, byKind["Service"].GetNamespace())
	names := map[string]string{
		"MutatingWebhookConfiguration":   certs.DefaultMutatingWebhookConfiguration,
		"ValidatingWebhookConfiguration": certs.DefaultValidatingWebhookConfiguration,
	}
	for kind, name := range names {
		cfg := byKind[kind]
		require.NotNil(t, cfg, kind)
		assert.Equal(t, name, cfg.GetName(), "the name self mode writes the CA bundle into")
		hooks, _, _ := unstructured.NestedSlice(cfg.Object, "webhooks")
		require.NotEmpty(t, hooks)
		for _, h := range hooks {
			hook := h.(map[string]any)
			svc, _, _ := unstructured.NestedMap(hook, "clientConfig", "service")
			assert.Equal(t, certs.DefaultServiceName, svc["name"], kind)
			assert.Equal(t, app.OperatorNamespace, svc["namespace"], kind)
			if path := svc["path"]; path != app.PodMutatePath && path != app.PodValidatePath {
				continue // only Pod hooks could lock the cluster's own namespaces out
			}
			exprs, _, _ := unstructured.NestedSlice(hook, "namespaceSelector", "matchExpressions")
			require.Len(t, exprs, 1)
			assert.ElementsMatch(t, []any{"kube-system", "kube-public", "kube-node-lease", "hexagonal-operator-system"}, exprs[0].(map[string]any)["values"])
		}
	}
}

func TestSelfModeThroughTheAPIServer(t *testing.T) {
	t.Parallel()
	cp := controlplane.StartT(t, controlplane.Options{})
	ctx := context.Background()
	cs := cp.Clientset()
	for _, ns := range []string{"apps", app.OperatorNamespace} {
		require.NoError(t, cp.EnsureNamespace(ctx, ns))
	}
	// Short lives, so the test sees serving certificates renewed every few
	// seconds and a whole CA rotation within the load below, with two
	// seconds between a renewal and the expiry it forestalls, which a
	// loaded machine may take to hand the new certificate over.
	opts := certs.SelfOptions{
		Namespace:                      app.OperatorNamespace,
		ExtraHosts:                     []string{"127.0.0.1"},
		MutatingWebhookConfiguration:   "mutating-webhook-configuration",
		ValidatingWebhookConfiguration: "validating-webhook-configuration",
		CAValidity:                     18 * time.Second,
		CertValidity:                   6 * time.Second,
		RefreshInterval:                100 * time.Millisecond,
	}

	// Three replicas start at once on an empty namespace: one creates the
	// Secret, the others read it. Two serve; the servers start their
	// certificates.
	replicas := make([]*certs.SelfIssued, 3)
	for i := range replicas {
		src, err := certs.NewSelfIssued(opts, cs, zaptest.NewLogger(t).Named("replica"))
		require.NoError(t, err)
		replicas[i] = src
	}
	servers := []*webhook.Server{newServer(t, replicas[0], prometheus.NewRegistry()), newServer(t, replicas[1], prometheus.NewRegistry())}
	t.Cleanup(func() { require.NoError(t, replicas[2].Stop(ctx)) })
	var wg sync.WaitGroup
	wg.Go(func() { assert.NoError(t, servers[0].Start(ctx)) })
	wg.Go(func() { assert.NoError(t, servers[1].Start(ctx)) })
	wg.Go(func() { assert.NoError(t, replicas[2].Start(ctx)) })
	wg.Wait()
	require.False(t, t.Failed())

	// The harness writes its own CA as caBundle; self mode replaces it.
	_, err := cp.InstallWebhooks(ctx, repoPath(t, "config/webhook"), controlplane.WebhookServer{Host: servers[0].Addr().String(), CABundle: cp.CACert()})
	require.NoError(t, err)
	waitForWebhooks(t, cs, "apps")
	for _, b := range bundles(t, cs, opts) {
		assert.Equal(t, replicas[0].CABundle(), b)
	}

	// A load of Pod creates through the API server, and fresh handshakes
	// the way a new API server connection makes them (verified against the
	// bundle in the webhook configuration at that moment), while serving
	// certificates and the CA rotate.
	loadCtx, stop := context.WithTimeout(ctx, 20*time.Second)
	defer stop()
	var creates, handshakes, failures atomic.Int64
	var firstFailure atomic.Value
	fail := func(err error) {
		failures.Add(1)
		firstFailure.CompareAndSwap(nil, err.Error())
	}
	var load sync.WaitGroup
	for range 4 {
		load.Go(func() {
			for loadCtx.Err() == nil {
				pod, err := cs.CoreV1().Pods("apps").Create(ctx, userPod("apps", "", nil), dryRun)
				switch {
				case err != nil:
					fail(err)
				case pod.Annotations[admission.PodAnnotationKey] != admission.PodAnnotationValue:
					fail(errors.New("pod admitted without the annotation"))
				default:
					creates.Add(1)
				}
			}
		})
	}
	seen := map[string]bool{}
	probe := podReview(t, "probe", admissionv1.Create, testPod(nil), nil)
	load.Go(func() {
		for i := 0; loadCtx.Err() == nil; i++ {
			srv := servers[i%len(servers)]
			cert, err := freshHandshake(cs, opts, srv, probe)
			if err != nil {
				fail(err)
				continue
			}
			handshakes.Add(1)
			seen[string(cert.Raw)] = true
			time.Sleep(20 * time.Millisecond) // pacing the probe, not asserting
		}
	})
	load.Wait()
	t.Logf("%d pod creates and %d fresh handshakes over %d serving certificates", creates.Load(), handshakes.Load(), len(seen))
	assert.Zero(t, failures.Load(), "first failure: %v", firstFailure.Load())
	assert.Positive(t, creates.Load())
	assert.GreaterOrEqual(t, len(seen), 4, "serving certificates were rotated during the load")
	// Each replica re-reads the shared Secret on its own refresh, so right
	// after a rotation one may still hold the previous version for a moment.
	assert.Eventually(t, func() bool {
		for _, r := range replicas[1:] {
			if !bytes.Equal(replicas[0].CABundle(), r.CABundle()) {
				return false
			}
		}
		return true
	}, 15*time.Second, 50*time.Millisecond, "replicas agree")
}

// bundles returns the caBundle of every webhook in the configurations
// opts names.
func bundles(t testing.TB, cs kubernetes.Interface, opts certs.SelfOptions) [][]byte {
	t.Helper()
	ctx := context.Background()
	m, err := cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, opts.MutatingWebhookConfiguration, metav1.GetOptions{})
	require.NoError(t, err)
	v, err := cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(ctx, opts.ValidatingWebhookConfiguration, metav1.GetOptions{})
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

// freshHandshake connects to srv with a new TLS connection, trusting what
// the MutatingWebhookConfiguration trusts now, and posts a review.
func freshHandshake(cs kubernetes.Interface, opts certs.SelfOptions, srv *webhook.Server, review []byte) (*x509.Certificate, error) {
	cfg, err := cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(context.Background(), opts.MutatingWebhookConfiguration, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(cfg.Webhooks[0].ClientConfig.CABundle) {
		return nil, errors.New("webhook configuration without a usable caBundle")
	}
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig:   &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12},
		DisableKeepAlives: true,
	}}
	defer client.CloseIdleConnections()
	resp, err := client.Post("https://"+srv.Addr().String()+app.PodMutatePath, "application/json", bytes.NewReader(review))
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return nil, errors.New(resp.Status)
	}
	return resp.TLS.PeerCertificates[0], nil
}
