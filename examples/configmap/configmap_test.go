package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/fx"
	"go.uber.org/goleak"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hexagonal-operator/operator/examples/configmap/confighash"
	"github.com/hexagonal-operator/operator/internal/adapters/logging"
	"github.com/hexagonal-operator/operator/internal/app"
	"github.com/hexagonal-operator/operator/internal/config"
	"github.com/hexagonal-operator/operator/test/controlplane"
)

func TestMain(m *testing.M) {
	// klog's logger is process-wide and set without a lock: install the
	// operator's sink once, before any client logs.
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

// sha is the hash of an encoding written out by hand, so the test checks
// the annotation against the documented format, not against the code.
func sha(encoding string) string {
	sum := sha256.Sum256([]byte(encoding))
	return hex.EncodeToString(sum[:])
}

// TestConfigMapsAreStamped runs the example's application, the standard
// operator plus confighashController, against a real API server.
func TestConfigMapsAreStamped(t *testing.T) {
	t.Parallel()
	cp := controlplane.StartT(t, controlplane.Options{AuditPolicy: controlplane.DefaultAuditPolicy})
	ctx := t.Context()
	const ns = "confighash"
	require.NoError(t, cp.EnsureNamespace(ctx, ns))
	cms := cp.Clientset().CoreV1().ConfigMaps(ns)
	var gatherer prometheus.Gatherer
	startApp(t, operatorConfig(t, cp), confighashController, fx.Populate(&gatherer))

	_, err := cms.Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "settings", Annotations: map[string]string{"team": "payments"}},
		Data:       map[string]string{"greeting": "hello"},
		BinaryData: map[string][]byte{"bin": {0, 1, 2}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)

	first := sha(`{"data":{"greeting":"hello"},"binaryData":{"bin":"AAEC"}}`)
	eventuallyAnnotated(t, cms, "settings", first)
	got, err := cms.Get(ctx, "settings", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, "payments", got.Annotations["team"], "the creator's annotation survives")

	t.Run("an edit of the data is stamped again, and foreign annotations survive", func(t *testing.T) {
		cm, err := cms.Get(ctx, "settings", metav1.GetOptions{})
		require.NoError(t, err)
		cm.Data["greeting"] = "hi"
		cm.Annotations["owner"] = "alice"
		_, err = cms.Update(ctx, cm, metav1.UpdateOptions{})
		require.NoError(t, err)

		second := sha(`{"data":{"greeting":"hi"},"binaryData":{"bin":"AAEC"}}`)
		eventuallyAnnotated(t, cms, "settings", second)
		got, err := cms.Get(ctx, "settings", metav1.GetOptions{})
		require.NoError(t, err)
		assert.Equal(t, map[string]string{"team": "payments", "owner": "alice", confighash.Annotation: second}, got.Annotations)
		assert.Equal(t, map[string]string{"greeting": "hi"}, got.Data)
	})

	t.Run("a ConfigMap with the right hash is not written", func(t *testing.T) {
		_, err := cms.Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "stamped", Annotations: map[string]string{confighash.Annotation: sha(`{"data":{"a":"1"}}`)}},
			Data:       map[string]string{"a": "1"},
		}, metav1.CreateOptions{})
		require.NoError(t, err)
		// One worker takes requests in order: once a ConfigMap created
		// later is stamped, the earlier one has been reconciled.
		_, err = cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "sentinel"}}, metav1.CreateOptions{})
		require.NoError(t, err)
		eventuallyAnnotated(t, cms, "sentinel", sha(`{}`))

		// Only the operator patches ConfigMaps here; the test creates and
		// updates them. A no-op patch would leave the object as it is, so
		// the API server's audit log is what tells.
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			assert.Equal(c, 1, patches(c, cp, ns, "sentinel"))
		}, 30*time.Second, 100*time.Millisecond)
		assert.Zero(t, patches(t, cp, ns, "stamped"))
		assert.Equal(t, 2, patches(t, cp, ns, "settings"), "one patch per content")
	})

	t.Run("each stamp is recorded as an Event", func(t *testing.T) {
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			events, err := cp.Clientset().EventsV1().Events(ns).List(ctx, metav1.ListOptions{})
			require.NoError(c, err)
			var notes []string
			for _, e := range events.Items {
				if e.Regarding.Kind == "ConfigMap" && e.Regarding.Name == "settings" && e.Reason == confighash.ReasonHashStamped {
					notes = append(notes, e.Note)
				}
			}
			assert.ElementsMatch(c, []string{
				"Set annotation " + confighash.Annotation + "=" + first,
				"Set annotation " + confighash.Annotation + "=" + sha(`{"data":{"greeting":"hi"},"binaryData":{"bin":"AAEC"}}`),
			}, notes)
		}, 30*time.Second, 100*time.Millisecond)
	})

	t.Run("a deleted ConfigMap is done", func(t *testing.T) {
		require.NoError(t, cms.Delete(ctx, "sentinel", metav1.DeleteOptions{}))
		_, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "sentinel-2"}}, metav1.CreateOptions{})
		require.NoError(t, err)
		eventuallyAnnotated(t, cms, "sentinel-2", sha(`{}`))

		assert.Positive(t, sample(t, gatherer, "controller_runtime_reconcile_total", map[string]string{"controller": "confighash", "result": "success"}))
		assert.Zero(t, sample(t, gatherer, "controller_runtime_reconcile_errors_total", map[string]string{"controller": "confighash"}))
	})
}

func eventuallyAnnotated(t *testing.T, cms interface {
	Get(context.Context, string, metav1.GetOptions) (*corev1.ConfigMap, error)
}, name, hash string,
) {
	t.Helper()
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		cm, err := cms.Get(context.Background(), name, metav1.GetOptions{})
		require.NoError(c, err)
		assert.Equal(c, hash, cm.Annotations[confighash.Annotation])
	}, 30*time.Second, 50*time.Millisecond, "configmap %s", name)
}

// patches counts the completed patches of the ConfigMap ns/name.
func patches(t require.TestingT, cp *controlplane.ControlPlane, ns, name string) int {
	events, err := cp.AuditEvents()
	require.NoError(t, err)
	n := 0
	for _, e := range events {
		if e.Stage == "ResponseComplete" && e.Verb == "patch" && e.ObjectRef != nil &&
			e.ObjectRef.Resource == "configmaps" && e.ObjectRef.Namespace == ns && e.ObjectRef.Name == name {
			n++
		}
	}
	return n
}

// operatorConfig is how the integration tests run the operator: the
// control plane's kubeconfig, every server on a free port, plain metrics,
// and only the replicaset controller of its own (ChaosPods need a CRD).
func operatorConfig(t *testing.T, cp *controlplane.ControlPlane) config.Config {
	t.Helper()
	certDir := t.TempDir()
	_, err := cp.IssueServingCert(certDir)
	require.NoError(t, err)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())
	cfg, err := config.Parse([]string{
		"--webhook-cert-dir=" + certDir,
		"--webhook-port=" + strconv.Itoa(port),
		"--kubeconfig=" + cp.KubeconfigPath,
		"--metrics-bind-address=127.0.0.1:0",
		"--metrics-secure=false",
		"--health-probe-bind-address=127.0.0.1:0",
		"--controllers=replicaset",
		"--shutdown-timeout=20s",
		"--zap-log-level=error",
	}, func(string) string { return "" })
	require.NoError(t, err)
	return cfg
}

// startApp starts the application, as main does, and stops it when the
// test ends.
func startApp(t *testing.T, cfg config.Config, opts ...fx.Option) {
	t.Helper()
	a := app.New(cfg, opts...)
	require.NoError(t, a.Err())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, a.Start(ctx))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
		defer cancel()
		assert.NoError(t, a.Stop(ctx))
	})
}

// sample sums the samples of a metric family matching labels.
func sample(t *testing.T, g prometheus.Gatherer, name string, labels map[string]string) float64 {
	t.Helper()
	families, err := g.Gather()
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
			sum += m.GetCounter().GetValue()
		}
	}
	return sum
}

// The guide's wiring block is the wiring of main.go, line for line, and as
// many lines as the guide says.
func TestGuideShowsTheWiring(t *testing.T) {
	t.Parallel()
	guide, err := os.ReadFile(filepath.Join("..", "..", "docs", "extending.md"))
	require.NoError(t, err)
	mainGo, err := os.ReadFile("main.go")
	require.NoError(t, err)

	claim := regexp.MustCompile(`(\d+) files? and (\d+) lines outside the domain package`).FindStringSubmatch(string(guide))
	require.NotNil(t, claim, "the guide states how many files and lines the wiring takes")
	wiring := wiringBlock(t, string(guide))
	assert.Len(t, wiring, atoi(t, claim[2]), "the block has as many lines as the guide claims")
	assert.Equal(t, "1", claim[1], "the wiring lives in main.go alone")
	var mainLines []string
	for _, l := range strings.Split(string(mainGo), "\n") {
		mainLines = append(mainLines, strings.TrimSpace(l))
	}
	for _, l := range wiring {
		assert.True(t, slices.Contains(mainLines, l), "main.go has the guide's line %q", l)
	}
}

// wiringBlock returns the code lines (trimmed, without comments and blank
// lines) of the go block that follows the <!-- wiring --> marker.
func wiringBlock(t *testing.T, guide string) []string {
	t.Helper()
	var lines []string
	s := bufio.NewScanner(strings.NewReader(guide))
	marked, in := false, false
	for s.Scan() {
		l := strings.TrimSpace(s.Text())
		switch {
		case l == "<!-- wiring -->":
			marked = true
		case marked && !in && l == "```go":
			in = true
		case in && l == "```":
			return lines
		case in && l != "" && !strings.HasPrefix(l, "//"):
			lines = append(lines, l)
		}
	}
	t.Fatal("no ```go block after <!-- wiring --> in docs/extending.md")
	return nil
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	require.NoError(t, err)
	return n
}
