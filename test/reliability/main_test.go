package reliability_test

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/hexagonal-operator/operator/test/controlplane"
	"github.com/hexagonal-operator/operator/test/operatorproc"
	"github.com/hexagonal-operator/operator/test/operatortest"
)

// operatorBin is built once by TestMain, race-instrumented when the tests
// run with the race detector; releaseBin never is, for the tests that hold
// the operator to a memory budget, which the race detector's shadow memory
// would break.
var operatorBin, releaseBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "reliability-operator-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	root, err := controlplane.RepoRoot()
	if err == nil {
		operatorBin, err = operatorproc.Build(root, dir)
	}
	if err == nil {
		releaseBin, err = operatorproc.BuildRelease(root, dir)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		_ = os.RemoveAll(dir)
		os.Exit(1)
	}
	goleak.VerifyTestMain(withoutChildren{m: m, cleanup: func() { _ = os.RemoveAll(dir) }},
		operatortest.IgnoredGoroutines()...)
}

// withoutChildren runs the tests and then fails the run when an operator or
// control plane process outlives them.
type withoutChildren struct {
	m       *testing.M
	cleanup func()
}

func (w withoutChildren) Run() int {
	code := w.m.Run()
	w.cleanup()
	return controlplane.WithoutChildren(code)
}

// figure prints one measurement in the form the reports collect.
func figure(t *testing.T, what string, value any) {
	t.Helper()
	if d, ok := value.(time.Duration); ok {
		value = d.Round(time.Millisecond)
	}
	t.Logf("figure: %s=%v", what, value)
}

// labelKey and labelValue are what the replicaset controller writes.
const labelKey, labelValue = "hello", "world"

func replicaSet(namespace, name string) *appsv1.ReplicaSet {
	labels := map[string]string{"app": name}
	return &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: map[string]string{"team": "reliability"}},
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

// createReplicaSets creates prefix-0000 .. prefix-(n-1) with c clients at
// once and fails on the first error.
func createReplicaSets(t *testing.T, cs kubernetes.Interface, namespace, prefix string, n, c int) {
	t.Helper()
	work := make(chan int)
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for range c {
		wg.Go(func() {
			for i := range work {
				name := fmt.Sprintf("%s-%04d", prefix, i)
				if _, err := cs.AppsV1().ReplicaSets(namespace).Create(context.Background(), replicaSet(namespace, name), metav1.CreateOptions{}); err != nil {
					errs <- fmt.Errorf("create replicaset %s/%s: %w", namespace, name, err)
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

// unlabeled returns the names of the ReplicaSets in namespace that do not
// carry the label yet, and how many there are in all.
func unlabeled(t *testing.T, cs kubernetes.Interface, namespace string) (missing []string, total int) {
	t.Helper()
	list, err := cs.AppsV1().ReplicaSets(namespace).List(context.Background(), metav1.ListOptions{})
	require.NoError(t, err)
	for _, rs := range list.Items {
		if rs.Labels[labelKey] != labelValue {
			missing = append(missing, rs.Name)
		}
	}
	return missing, len(list.Items)
}

// waitAllLabeled waits until want ReplicaSets exist in namespace and all
// carry the label, and returns when that was first seen.
func waitAllLabeled(t *testing.T, cs kubernetes.Interface, namespace string, want int, timeout time.Duration) time.Time {
	t.Helper()
	var at time.Time
	var missing []string
	var total int
	ok := assert.Eventually(t, func() bool {
		list, err := cs.AppsV1().ReplicaSets(namespace).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return false
		}
		missing, total = nil, len(list.Items)
		for _, rs := range list.Items {
			if rs.Labels[labelKey] != labelValue {
				missing = append(missing, rs.Name)
			}
		}
		if total == want && len(missing) == 0 {
			at = time.Now()
			return true
		}
		return false
	}, timeout, 50*time.Millisecond)
	if !ok {
		m, n := unlabeled(t, cs, namespace)
		t.Fatalf("namespace %s: %d of %d ReplicaSets still unlabeled after %s (want %d in all): %v", namespace, len(m), n, timeout, want, m)
	}
	return at
}

// isLabeled reports whether namespace/name exists and carries the label.
func isLabeled(cs kubernetes.Interface, namespace, name string) bool {
	rs, err := cs.AppsV1().ReplicaSets(namespace).Get(context.Background(), name, metav1.GetOptions{})
	return err == nil && rs.Labels[labelKey] == labelValue
}
