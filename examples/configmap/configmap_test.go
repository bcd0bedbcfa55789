package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hexagonal-operator/operator/examples/configmap/confighash"
	"github.com/hexagonal-operator/operator/test/controlplane"
	"github.com/hexagonal-operator/operator/test/operatortest"
)

func TestMain(m *testing.M) { operatortest.Main(m) }

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
	op := operatortest.Start(t, operatortest.Config(t, cp), confighashController)

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

		assert.Positive(t, op.Counter(t, "controller_runtime_reconcile_total", map[string]string{"controller": "confighash", "result": "success"}))
		assert.Zero(t, op.Counter(t, "controller_runtime_reconcile_errors_total", map[string]string{"controller": "confighash"}))
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

// The guide's wiring block is the wiring of main.go, line for line, and as
// many lines as the guide says.
func TestGuideShowsTheWiring(t *testing.T) {
	t.Parallel()
	guidePath := filepath.Join("..", "..", "docs", "extending.md")
	guide, err := os.ReadFile(guidePath)
	require.NoError(t, err)

	claim := regexp.MustCompile(`(\d+) files? and (\d+) lines outside the domain package`).FindStringSubmatch(string(guide))
	require.NotNil(t, claim, "the guide states how many files and lines the wiring takes")
	wiring := operatortest.CodeBlock(t, guidePath, "<!-- wiring -->")
	assert.Len(t, wiring, atoi(t, claim[2]), "the block has as many lines as the guide claims")
	assert.Equal(t, "1", claim[1], "the wiring lives in main.go alone")
	mainLines := operatortest.SourceLines(t, "main.go")
	for _, l := range wiring {
		assert.True(t, slices.Contains(mainLines, l), "main.go has the guide's line %q", l)
	}
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	require.NoError(t, err)
	return n
}
