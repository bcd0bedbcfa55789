package webhook_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
	"go.uber.org/fx"
	"go.uber.org/goleak"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	chaosv1 "github.com/hexagonal-operator/operator/api/chaos/v1"
	"github.com/hexagonal-operator/operator/internal/adapters/certs"
	"github.com/hexagonal-operator/operator/internal/adapters/memory"
	"github.com/hexagonal-operator/operator/internal/adapters/webhook"
	"github.com/hexagonal-operator/operator/internal/app"
	"github.com/hexagonal-operator/operator/internal/ports"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// client-go's and klog's background workers, started by the
		// integration tests and alive for the whole process.
		goleak.IgnoreTopFunction("k8s.io/klog/v2.(*flushDaemon).run.func1"),
		goleak.IgnoreAnyFunction("k8s.io/client-go/util/workqueue.(*Typed[...]).updateUnfinishedWorkLoop"),
		goleak.IgnoreAnyFunction("k8s.io/client-go/util/workqueue.(*delayingType[...]).waitingLoop"),
	)
}

// fixture is a webhook server on a free loopback port with certificates
// from a test CA in a temporary folder.
type fixture struct {
	server *webhook.Server
	certs  *certs.FileSource
	reg    *prometheus.Registry
	ca     *testCA
	dir    string
	client *http.Client
	base   string
	logs   *observer.ObservedLogs
}

func podHooks() []webhook.Hook {
	return hooksOf(app.PodWebhooks)
}

// hooksOf are the rows that opts register, built as the operator builds
// them.
func hooksOf(opts ...fx.Option) []webhook.Hook {
	var table struct {
		fx.In
		Hooks []webhook.Hook `group:"webhooks"`
	}
	if err := fx.New(append(opts, fx.NopLogger, fx.Populate(&table))...).Err(); err != nil {
		panic(err)
	}
	return table.Hooks
}

// testHook is a row on Pods at path for a test's rule, which
// webhook.Mutating or webhook.Validating adds.
func testHook(path string) webhook.Hook {
	return webhook.Hook{
		Name: strings.Trim(strings.ReplaceAll(path, "/", "."), ".") + ".test.io", Path: path, TimeoutSeconds: 10,
		Resource: app.PodResource, Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
	}
}

// validateFunc is a test's validator of Pods: each method calls it with
// the request's object (the new one on update).
type validateFunc func(ctx context.Context, pod *corev1.Pod) (ports.Warnings, error)

func (f validateFunc) ValidateCreate(ctx context.Context, pod *corev1.Pod) (ports.Warnings, error) {
	return f(ctx, pod)
}

func (f validateFunc) ValidateUpdate(ctx context.Context, _, pod *corev1.Pod) (ports.Warnings, error) {
	return f(ctx, pod)
}

func (f validateFunc) ValidateDelete(ctx context.Context, pod *corev1.Pod) (ports.Warnings, error) {
	return f(ctx, pod)
}

// defaultFunc is a test's defaulter of Pods.
type defaultFunc func(ctx context.Context, pod *corev1.Pod) (ports.Warnings, error)

func (f defaultFunc) Default(ctx context.Context, pod *corev1.Pod) (ports.Warnings, error) {
	return f(ctx, pod)
}

func startFixture(t testing.TB, hooks []webhook.Hook, mod func(*webhook.Options), conversions ...webhook.Conversion) *fixture {
	t.Helper()
	ca, err := newTestCA()
	require.NoError(t, err)
	dir := t.TempDir()
	writePair(t, dir, issue(t, ca, time.Hour))
	opts := webhook.Options{Host: "127.0.0.1", Port: webhook.AnyPort}
	if mod != nil {
		mod(&opts)
	}
	core, logs := observer.New(zapcore.DebugLevel)
	log := zap.New(core)
	if _, ok := t.(*testing.B); ok {
		// Benchmarks log as production does: JSON at info, to nowhere.
		log = zap.New(zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), zapcore.AddSync(io.Discard), zapcore.InfoLevel))
	}
	certs := fileSource(t, dir, 20*time.Millisecond, log)
	reg := prometheus.NewPedanticRegistry()
	srv, err := webhook.New(opts, certs, hooks, reg, log, conversions...)
	require.NoError(t, err)
	require.NoError(t, srv.Start(context.Background()))
	t.Cleanup(func() { require.NoError(t, srv.Stop(context.Background())) })
	client := newClient(ca)
	t.Cleanup(client.CloseIdleConnections)
	return &fixture{server: srv, certs: certs, reg: reg, ca: ca, dir: dir, client: client, base: "https://" + srv.Addr().String(), logs: logs}
}

// fileSource is the certificate of the files in dir, as the webhook
// server's in external mode.
func fileSource(t testing.TB, dir string, interval time.Duration, log *zap.Logger) *certs.FileSource {
	t.Helper()
	src, err := certs.NewFileSource("webhook", certs.Files{Dir: dir}, interval, certs.NewReads(), log)
	require.NoError(t, err)
	return src
}

func newClient(ca *testCA) *http.Client {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca.CertPEM)
	return &http.Client{
		Timeout: 30 * time.Second,
		Transport: &http.Transport{
			TLSClientConfig:     &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12},
			MaxIdleConnsPerHost: 64,
			ForceAttemptHTTP2:   false,
		},
	}
}

func issue(t testing.TB, ca *testCA, validity time.Duration) testPair {
	t.Helper()
	pair, err := ca.Issue(validity, "127.0.0.1", "localhost")
	require.NoError(t, err)
	return pair
}

// writePair replaces the files the way a Secret volume does: new files,
// then an atomic rename, so a reader never sees half a file.
func writePair(t testing.TB, dir string, p testPair) {
	t.Helper()
	for name, data := range map[string][]byte{"tls.crt": p.CertPEM, "tls.key": p.KeyPEM} {
		tmp := filepath.Join(dir, "."+name+".tmp")
		require.NoError(t, os.WriteFile(tmp, data, 0o600))
		require.NoError(t, os.Rename(tmp, filepath.Join(dir, name)))
	}
}

func (f *fixture) post(t testing.TB, path, contentType string, body []byte) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, f.base+path, bytes.NewReader(body))
	require.NoError(t, err)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := f.client.Do(req)
	require.NoError(t, err)
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, data
}

// admit posts a review and decodes the answer, which must be a 200.
func (f *fixture) admit(t testing.TB, path string, body []byte) *admissionv1.AdmissionResponse {
	t.Helper()
	resp, data := f.post(t, path, "application/json", body)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(data))
	require.Equal(t, "application/json", resp.Header.Get("Content-Type"))
	var review admissionv1.AdmissionReview
	require.NoError(t, json.Unmarshal(data, &review))
	require.Equal(t, "admission.k8s.io/v1", review.APIVersion)
	require.Equal(t, "AdmissionReview", review.Kind)
	require.NotNil(t, review.Response)
	return review.Response
}

var (
	podKind     = metav1.GroupVersionKind{Version: "v1", Kind: "Pod"}
	podResource = metav1.GroupVersionResource{Version: "v1", Resource: "pods"}
)

func testPod(annotations map[string]string) *corev1.Pod {
	return &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "web", Annotations: annotations, Labels: map[string]string{"app": "web"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx"}}},
	}
}

func raw(t testing.TB, obj any) runtime.RawExtension {
	t.Helper()
	if obj == nil {
		return runtime.RawExtension{}
	}
	if b, ok := obj.([]byte); ok {
		return runtime.RawExtension{Raw: b}
	}
	b, err := json.Marshal(obj)
	require.NoError(t, err)
	return runtime.RawExtension{Raw: b}
}

// podReview is a v1 AdmissionReview about a Pod; edit changes the request
// before it is encoded.
func podReview(t testing.TB, uid string, op admissionv1.Operation, obj, old any, edit ...func(*admissionv1.AdmissionReview)) []byte {
	t.Helper()
	r := &admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{
			UID:       types.UID(uid),
			Kind:      podKind,
			Resource:  podResource,
			Namespace: "apps",
			Name:      "web",
			Operation: op,
			UserInfo:  authenticationv1.UserInfo{Username: "alice"},
			Object:    raw(t, obj),
			OldObject: raw(t, old),
		},
	}
	for _, e := range edit {
		e(r)
	}
	b, err := json.Marshal(r)
	require.NoError(t, err)
	return b
}

// gather flattens the webhook metrics to "name{label="value",...}" →
// value; histograms contribute their sample count as name_count.
func gather(t testing.TB, g prometheus.Gatherer) map[string]float64 {
	t.Helper()
	families, err := g.Gather()
	require.NoError(t, err)
	out := map[string]float64{}
	for _, mf := range families {
		if !strings.HasPrefix(mf.GetName(), "controller_runtime_webhook_") {
			continue
		}
		for _, m := range mf.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			name, sel := mf.GetName(), "{"+strings.Join(labels, ",")+"}"
			switch {
			case m.GetCounter() != nil:
				out[name+sel] = m.GetCounter().GetValue()
			case m.GetGauge() != nil:
				out[name+sel] = m.GetGauge().GetValue()
			case m.GetHistogram() != nil:
				out[name+"_count"+sel] = float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return out
}

// clock is a fixed time source for the admission rules.
type clock struct{ now time.Time }

func (c *clock) Now() time.Time { return c.now }

func chaosPodHooks() []webhook.Hook {
	clock := &clock{now: time.Now()}
	return hooksOf(app.ChaosPodWebhooks, fx.Supply(fx.Annotate(clock, fx.As(new(ports.Clock)))))
}

func operatorPodHooks() []webhook.Hook {
	chaosPods := memory.NewStore[*chaosv1.ChaosPod](chaosv1.GroupKind)
	return hooksOf(app.OperatorPodWebhooks, fx.Supply(fx.Annotate(chaosPods, fx.As(new(ports.Reader[*chaosv1.ChaosPod])))))
}
