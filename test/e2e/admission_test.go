package e2e_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hexagonal-operator/operator/test/controlplane"
	"github.com/hexagonal-operator/operator/test/operatorproc"
)

// The binary's Pod webhooks, installed from config/webhook, admit Pods
// through the real API server.
func TestPodAdmissionThroughTheAPIServer(t *testing.T) {
	t.Parallel()
	cp := controlplane.StartT(t, controlplane.Options{})
	ctx := context.Background()
	p := operatorproc.RunAgainst(t, operatorBin, cp, "--controllers=replicaset")
	root, err := controlplane.RepoRoot()
	require.NoError(t, err)
	_, err = cp.InstallWebhooks(ctx, filepath.Join(root, "config", "webhook"), controlplane.WebhookServer{Host: p.Webhook, CABundle: cp.CACert()})
	require.NoError(t, err)

	cs := cp.Clientset()
	pod := func(name string) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{"team": "e2e"}},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}}},
		}
	}
	// Webhook configurations take effect asynchronously in the API server.
	var created *corev1.Pod
	require.Eventually(t, func() bool {
		_ = cs.CoreV1().Pods("default").Delete(ctx, "annotated", metav1.DeleteOptions{GracePeriodSeconds: new(int64)})
		created, err = cs.CoreV1().Pods("default").Create(ctx, pod("annotated"), metav1.CreateOptions{})
		return err == nil && created.Annotations["example-mutating-admission-webhook"] == "foo"
	}, 30*time.Second, 200*time.Millisecond)
	assert.Equal(t, "e2e", created.Annotations["team"], "other annotations kept")

	// Updating the annotation away gets it back from the mutator, so the
	// validator admits the result.
	created.Annotations = map[string]string{"team": "e2e"}
	updated, err := cs.CoreV1().Pods("default").Update(ctx, created, metav1.UpdateOptions{})
	require.NoError(t, err)
	assert.Equal(t, "foo", updated.Annotations["example-mutating-admission-webhook"])

	// kube-system is never touched.
	sys, err := cs.CoreV1().Pods("kube-system").Create(ctx, pod("untouched"), metav1.CreateOptions{})
	require.NoError(t, err)
	assert.NotContains(t, sys.Annotations, "example-mutating-admission-webhook")
}
