package kube_test

import (
	"bufio"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/hexagonal-operator/operator/internal/adapters/kube"
	"github.com/hexagonal-operator/operator/internal/ports"
	"github.com/hexagonal-operator/operator/internal/writes"
	"github.com/hexagonal-operator/operator/test/controlplane"
)

// TestOnAPIServer proves on a real API server what fakes cannot: the wire
// formats, the field manager, the user agent and the errors it really
// returns.
func TestOnAPIServer(t *testing.T) {
	t.Parallel()
	cp := controlplane.StartT(t, controlplane.Options{AuditPolicy: controlplane.DefaultAuditPolicy})
	const ns = "kube-adapter"
	require.NoError(t, cp.EnsureNamespace(t.Context(), ns))
	clients, err := kube.NewClients(cp.Config, kube.Options{UserAgent: "kube-adapter-test/1"})
	require.NoError(t, err)
	writer, err := kube.NewWriter[*appsv1.ReplicaSet](clients, replicaSets)
	require.NoError(t, err)
	rsKey := types.NamespacedName{Namespace: ns, Name: "web"}
	_, err = clients.Kubernetes.AppsV1().ReplicaSets(ns).Create(t.Context(), replicaSet(rsKey), metav1.CreateOptions{FieldManager: "someone-else"})
	require.NoError(t, err, "the typed clientset speaks protobuf to the server")

	t.Run("labels are patched under the operator's field manager", func(t *testing.T) {
		require.NoError(t, writer.PatchMetadata(t.Context(), rsKey, ports.MetadataPatch{Labels: map[string]string{"hello": "world"}}))

		got, err := cp.Clientset().AppsV1().ReplicaSets(ns).Get(t.Context(), rsKey.Name, metav1.GetOptions{})
		require.NoError(t, err)
		assert.Equal(t, map[string]string{"app": "web", "hello": "world"}, got.Labels)
		var managers []string
		for _, mf := range got.ManagedFields {
			managers = append(managers, mf.Manager)
			if mf.Manager == kube.FieldManager {
				assert.Contains(t, mf.FieldsV1.GetRawString(), `"f:hello"`, "the operator owns the label it wrote")
				assert.NotContains(t, mf.FieldsV1.GetRawString(), `"f:app"`, "and nothing else")
			}
		}
		assert.Contains(t, managers, kube.FieldManager)
	})

	t.Run("writes report the resourceVersion the server returned", func(t *testing.T) {
		obs := &observedWrites{}
		ctx := writes.WithObserver(t.Context(), obs.observe)
		require.NoError(t, writer.PatchMetadata(ctx, rsKey, ports.MetadataPatch{Labels: map[string]string{"observed": "yes"}}))
		got, err := cp.Clientset().AppsV1().ReplicaSets(ns).Get(t.Context(), rsKey.Name, metav1.GetOptions{})
		require.NoError(t, err)

		pods, err := kube.NewWriter[*corev1.Pod](clients, corev1.SchemeGroupVersion.WithResource("pods"))
		require.NoError(t, err)
		pod, err := pods.Create(ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "observed"},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
		})
		require.NoError(t, err)

		_, err = clients.Kubernetes.CoreV1().ConfigMaps(ns).Create(t.Context(),
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "observed"}}, metav1.CreateOptions{})
		require.NoError(t, err)
		configMaps, err := kube.NewWriter[*corev1.ConfigMap](clients, corev1.SchemeGroupVersion.WithResource("configmaps"))
		require.NoError(t, err)
		require.NoError(t, configMaps.PatchMetadata(ctx,
			types.NamespacedName{Namespace: ns, Name: "observed"}, ports.MetadataPatch{Annotations: map[string]string{"observed": "yes"}}))
		cm, err := clients.Kubernetes.CoreV1().ConfigMaps(ns).Get(t.Context(), "observed", metav1.GetOptions{})
		require.NoError(t, err)

		assert.Equal(t, []string{"ReplicaSet@" + got.ResourceVersion, "Pod@" + pod.ResourceVersion, "ConfigMap@" + cm.ResourceVersion}, obs.writes)
	})

	t.Run("requests carry the user agent", func(t *testing.T) {
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			assert.Contains(c, auditedUserAgents(t, cp.AuditLogPath, "patch", "replicasets"), "kube-adapter-test/1")
		}, 30*time.Second, 100*time.Millisecond)
	})

	t.Run("metadata and dynamic clients work", func(t *testing.T) {
		list, err := clients.Metadata.Resource(schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "replicasets"}).
			Namespace(ns).List(t.Context(), metav1.ListOptions{})
		require.NoError(t, err)
		require.Len(t, list.Items, 1)
		assert.Equal(t, "web", list.Items[0].Name)
		u, err := clients.Dynamic.Resource(schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "replicasets"}).
			Namespace(ns).Get(t.Context(), "web", metav1.GetOptions{})
		require.NoError(t, err)
		assert.Equal(t, "world", u.GetLabels()["hello"])
	})

	t.Run("errors arrive as port errors", func(t *testing.T) {
		nobody, err := kube.NewClients(cp.ImpersonatedConfig("nobody"), kube.Options{})
		require.NoError(t, err)
		forbidden, err := kube.NewWriter[*appsv1.ReplicaSet](nobody, replicaSets)
		require.NoError(t, err)
		tests := []struct {
			name   string
			writer *kube.Writer[*appsv1.ReplicaSet]
			key    types.NamespacedName
			labels map[string]string
			want   error
		}{
			{"missing replicaset", writer, types.NamespacedName{Namespace: ns, Name: "absent"}, map[string]string{"hello": "world"}, ports.ErrNotFound},
			{"invalid label value", writer, rsKey, map[string]string{"hello": "not a valid value!"}, ports.ErrInvalid},
			{"no permission", forbidden, rsKey, map[string]string{"hello": "world"}, ports.ErrForbidden},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				err := tt.writer.PatchMetadata(t.Context(), tt.key, ports.MetadataPatch{Labels: tt.labels})
				require.ErrorIs(t, err, tt.want)
				t.Log(err)
			})
		}
	})
}

func replicaSet(key types.NamespacedName) *appsv1.ReplicaSet {
	sel := map[string]string{"app": key.Name}
	return &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name, Labels: sel},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: new(int32),
			Selector: &metav1.LabelSelector{MatchLabels: sel},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: sel},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "registry.k8s.io/pause:3.10"}}},
			},
		},
	}
}

// auditedUserAgents returns the user agents of the audited requests with
// verb on resource. (controlplane.AuditEvent does not carry the field.)
func auditedUserAgents(t *testing.T, path, verb, resource string) []string {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer func() { _ = f.Close() }()
	var agents []string
	s := bufio.NewScanner(f)
	s.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	for s.Scan() {
		var e struct {
			Verb      string `json:"verb"`
			UserAgent string `json:"userAgent"`
			ObjectRef *struct {
				Resource string `json:"resource"`
			} `json:"objectRef"`
		}
		if json.Unmarshal(s.Bytes(), &e) != nil || e.ObjectRef == nil {
			continue
		}
		if e.Verb == verb && e.ObjectRef.Resource == resource && !strings.HasPrefix(e.UserAgent, "kube-apiserver") {
			agents = append(agents, e.UserAgent)
		}
	}
	return agents
}

type observedWrites struct{ writes []string }

func (o *observedWrites) observe(kind schema.GroupKind, rv string) {
	o.writes = append(o.writes, kind.Kind+"@"+rv)
}

var replicaSets = appsv1.SchemeGroupVersion.WithResource("replicasets")
