package e2e_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/hexagonal-operator/operator/test/controlplane"
	"github.com/hexagonal-operator/operator/test/operatorproc"
)

// The operator labels 1000 ReplicaSets that exist before it starts. The log
// shows the time from process start to all labeled next to the ceiling: the
// same number of direct PATCHes from an unthrottled client, c=32.
func TestOperatorLabelsPreexistingReplicaSets(t *testing.T) {
	t.Parallel()
	const n = 1000
	cp := controlplane.StartT(t, controlplane.Options{})
	ctx := context.Background()
	cs := cp.Clientset()
	require.NoError(t, cp.EnsureNamespace(ctx, "backlog"))
	require.NoError(t, cp.EnsureNamespace(ctx, "ceiling"))
	createReplicaSets(t, cs, "backlog", n)
	createReplicaSets(t, cs, "ceiling", n)

	began := time.Now()
	ceiling(t, cs, "ceiling", n)
	ceilingTook := time.Since(began)

	began = time.Now()
	operatorproc.RunAgainst(t, operatorBin, cp, "--controllers=replicaset")
	require.Eventually(t, func() bool { return countLabeled(t, cs, "backlog") == n }, 2*time.Minute, 100*time.Millisecond)
	took := time.Since(began)
	t.Logf("rs-backlog: %d ReplicaSets labeled in %s from process start; ceiling (%d direct PATCHes, c=32): %s; ratio %.2f",
		n, took.Round(time.Millisecond), n, ceilingTook.Round(time.Millisecond), float64(took)/float64(ceilingTook))
}

func createReplicaSets(t *testing.T, cs kubernetes.Interface, namespace string, n int) {
	t.Helper()
	parallel(t, n, 32, func(i int) error {
		_, err := cs.AppsV1().ReplicaSets(namespace).Create(context.Background(), replicaSet(namespace, fmt.Sprintf("rs-%04d", i)), metav1.CreateOptions{})
		return err
	})
}

func ceiling(t *testing.T, cs kubernetes.Interface, namespace string, n int) {
	t.Helper()
	patch := []byte(`{"metadata":{"labels":{"hello":"world"}}}`)
	parallel(t, n, 32, func(i int) error {
		_, err := cs.AppsV1().ReplicaSets(namespace).Patch(context.Background(), fmt.Sprintf("rs-%04d", i), types.MergePatchType, patch, metav1.PatchOptions{})
		return err
	})
}

func countLabeled(t *testing.T, cs kubernetes.Interface, namespace string) int {
	list, err := cs.AppsV1().ReplicaSets(namespace).List(context.Background(), metav1.ListOptions{LabelSelector: "hello=world"})
	require.NoError(t, err)
	return len(list.Items)
}

// parallel runs fn(0..n-1) on c goroutines and fails on the first error.
func parallel(t *testing.T, n, c int, fn func(i int) error) {
	t.Helper()
	work := make(chan int)
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for range c {
		wg.Go(func() {
			for i := range work {
				if err := fn(i); err != nil {
					errs <- err
				}
			}
		})
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}

func replicaSet(namespace, name string) *appsv1.ReplicaSet {
	labels := map[string]string{"app": name}
	return &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: map[string]string{"team": "e2e"}},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: ptr.To[int32](0),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}}},
			},
		},
	}
}
