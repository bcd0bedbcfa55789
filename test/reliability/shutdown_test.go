package reliability_test

import (
	"context"
	"fmt"
	"net/http/httptrace"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/hexagonal-operator/operator/test/controlplane"
	"github.com/hexagonal-operator/operator/test/operatorproc"
)

// annotationKey is what the Pod mutating webhook sets, to "foo".
const annotationKey = "example-mutating-admission-webhook"

// TestGracefulShutdownUnderLoad SIGTERMs the operator while ReplicaSets are
// being created and Pods are admitted through its webhooks (failurePolicy
// Fail). It must exit 0 within --shutdown-timeout without failing any Pod
// create that was sent before the signal — the webhook server drains what
// it has — and a second operator must then label every ReplicaSet, the
// ones created during and after the stop included.
func TestGracefulShutdownUnderLoad(t *testing.T) {
	t.Parallel()
	const (
		ns              = "load"
		shutdownTimeout = 15 * time.Second
		replicaSets     = 60
		podWorkers      = 4
	)
	cp := controlplane.StartT(t, controlplane.Options{})
	ctx := t.Context()
	require.NoError(t, cp.EnsureNamespace(ctx, ns))
	cs := cp.Clientset()
	args := []string{"--controllers=replicaset", "--shutdown-timeout=" + shutdownTimeout.String()}
	first := operatorproc.RunAgainst(t, operatorBin, cp, args...)
	root, err := controlplane.RepoRoot()
	require.NoError(t, err)
	_, err = cp.InstallWebhooks(ctx, filepath.Join(root, "config", "webhook"), controlplane.WebhookServer{Host: first.Webhook, CABundle: cp.CACert()})
	require.NoError(t, err)
	waitForPodWebhooks(t, cs, ns)

	rs := startReplicaSetLoad(cs, ns, replicaSets)
	pods := startPodLoad(cs, ns, podWorkers)
	require.Eventually(t, func() bool { return pods.admitted() >= 20 && rs.created() >= replicaSets/3 },
		30*time.Second, 20*time.Millisecond, "load under way")

	// No Pod create starts after the signal: once the process is gone, the
	// Fail policy rejects them, as it should. Which requests were in flight
	// at the signal follows from the order the load's lock puts between each
	// request and the signal, not from clock readings.
	signalled := time.Now()
	pods.signal(t, func() error { return first.Signal(syscall.SIGTERM) })
	sent := pods.wait()
	code := first.Wait(t, shutdownTimeout+5*time.Second)
	stopped := first.ExitedAt().Sub(signalled)
	require.NoError(t, rs.wait(), "ReplicaSet creates do not go through the operator")
	unlabeledAtExit, _ := unlabeled(t, cs, ns)

	var inFlight int
	var failed []string
	for _, r := range sent {
		if r.wroteBeforeSignal && r.answeredAfterSignal {
			inFlight++
		}
		switch {
		case r.err != nil:
			failed = append(failed, fmt.Sprintf("%s: %v", r.name, r.err))
		case r.annotation != "foo":
			failed = append(failed, fmt.Sprintf("%s: annotation %q, not mutated", r.name, r.annotation))
		}
	}
	figure(t, "shutdown-pod-creates-before-sigterm", len(sent))
	figure(t, "shutdown-pod-creates-in-flight-at-sigterm", inFlight)
	figure(t, "shutdown-pod-creates-failed", len(failed))
	figure(t, "shutdown-exit-after-sigterm", stopped)
	figure(t, "shutdown-replicasets-unlabeled-at-exit", len(unlabeledAtExit))
	assert.Equal(t, 0, code, "exit code after SIGTERM")
	assert.Less(t, stopped, shutdownTimeout, "stopped within --shutdown-timeout")
	assert.Empty(t, failed, "Pod creates sent before SIGTERM")
	// With no request on its way at the signal, no failures above would
	// prove nothing about the drain.
	assert.Positive(t, inFlight, "Pod creates written before SIGTERM and answered after it")

	// Nothing lost: a new operator labels what the first left.
	began := time.Now()
	operatorproc.RunAgainst(t, operatorBin, cp, args...)
	labeled := waitAllLabeled(t, cs, ns, replicaSets, 60*time.Second)
	figure(t, "shutdown-second-operator-labeled-rest", labeled.Sub(began))
}

// waitForPodWebhooks waits until the API server calls the Pod mutator: it
// learns about new webhook configurations a moment later.
func waitForPodWebhooks(t *testing.T, cs kubernetes.Interface, namespace string) {
	t.Helper()
	require.Eventually(t, func() bool {
		got, err := cs.CoreV1().Pods(namespace).Create(context.Background(), pod(namespace, "probe"), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err == nil && got.Annotations[annotationKey] == "foo"
	}, 30*time.Second, 50*time.Millisecond, "the API server calls the Pod webhooks")
}

func pod(namespace, name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Annotations: map[string]string{"team": "reliability"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}}},
	}
}

// podLoad creates Pods from several goroutines until the signal, and
// records each request.
type podLoad struct {
	ok atomic.Int64
	wg sync.WaitGroup

	// mu orders every request against the signal: signal holds it while
	// it sends, so a request that saw stop unset began before the signal,
	// and one that sees signalled set was answered after it.
	mu        sync.Mutex
	stop      bool
	signalled bool
	results   []podResult
}

type podResult struct {
	name       string
	err        error
	annotation string
	// wroteBeforeSignal: the whole request was written to the API server
	// before the signal; answeredAfterSignal: its response came after.
	wroteBeforeSignal, answeredAfterSignal bool
}

func startPodLoad(cs kubernetes.Interface, namespace string, workers int) *podLoad {
	l := &podLoad{}
	for w := range workers {
		l.wg.Go(func() {
			for i := 0; l.starting(); i++ {
				r := podResult{name: fmt.Sprintf("load-%d-%04d", w, i)}
				// The trace reports when the request left the client,
				// which may be after the signal for one begun before it.
				ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
					WroteRequest: func(httptrace.WroteRequestInfo) {
						l.mu.Lock()
						defer l.mu.Unlock()
						r.wroteBeforeSignal = !l.signalled
					},
				})
				created, err := cs.CoreV1().Pods(namespace).Create(ctx, pod(namespace, r.name), metav1.CreateOptions{})
				r.err = err
				if err == nil {
					r.annotation = created.Annotations[annotationKey]
					l.ok.Add(1)
				}
				l.mu.Lock()
				r.answeredAfterSignal = l.signalled
				l.results = append(l.results, r)
				l.mu.Unlock()
			}
		})
	}
	return l
}

// starting reports whether another request may begin.
func (l *podLoad) starting() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return !l.stop
}

func (l *podLoad) admitted() int64 { return l.ok.Load() }

// signal stops new requests and calls send, which signals the operator,
// while no request can begin or end, so that each one is either wholly
// before the signal or ends after it.
func (l *podLoad) signal(t *testing.T, send func() error) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stop = true
	require.NoError(t, send())
	l.signalled = true
}

// wait returns every request once the last has finished.
func (l *podLoad) wait() []podResult {
	l.wg.Wait()
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.results
}

// replicaSetLoad creates n ReplicaSets from two goroutines.
type replicaSetLoad struct {
	n    atomic.Int64
	done chan error
}

func startReplicaSetLoad(cs kubernetes.Interface, namespace string, n int) *replicaSetLoad {
	l := &replicaSetLoad{done: make(chan error, 1)}
	go func() {
		work := make(chan int)
		errs := make(chan error, n)
		var wg sync.WaitGroup
		for range 2 {
			wg.Go(func() {
				for i := range work {
					name := fmt.Sprintf("rs-%04d", i)
					if _, err := cs.AppsV1().ReplicaSets(namespace).Create(context.Background(), replicaSet(namespace, name), metav1.CreateOptions{}); err != nil {
						errs <- fmt.Errorf("create replicaset %s/%s: %w", namespace, name, err)
						continue
					}
					l.n.Add(1)
				}
			})
		}
		// Spread over the stop rather than all at once.
		tick := time.NewTicker(25 * time.Millisecond)
		defer tick.Stop()
		for i := range n {
			<-tick.C
			work <- i
		}
		close(work)
		wg.Wait()
		close(errs)
		l.done <- <-errs // the first error, or nil
	}()
	return l
}

func (l *replicaSetLoad) created() int64 { return l.n.Load() }

func (l *replicaSetLoad) wait() error { return <-l.done }
