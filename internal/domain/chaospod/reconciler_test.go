package chaospod_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	chaosv1 "github.com/hexagonal-operator/operator/api/chaos/v1"
	"github.com/hexagonal-operator/operator/internal/adapters/memory"
	"github.com/hexagonal-operator/operator/internal/domain/chaospod"
	"github.com/hexagonal-operator/operator/internal/ports"
)

var key = types.NamespacedName{Namespace: "ns", Name: "chaos"}

type world struct {
	clock     *memory.Clock
	chaosPods *memory.Store[*chaosv1.ChaosPod]
	pods      *memory.Store[*corev1.Pod]
	events    *memory.EventRecorder
	r         *chaospod.Reconciler
}

func newWorld(t *testing.T) *world {
	t.Helper()
	w := &world{
		clock:     memory.NewClock(time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)),
		chaosPods: memory.NewStore[*chaosv1.ChaosPod](chaosv1.GroupKind),
		events:    memory.NewEventRecorder(),
	}
	w.pods = memory.NewStore[*corev1.Pod](schema.GroupKind{Kind: "Pod"}).WithClock(w.clock)
	r, err := chaospod.New(w.chaosPods, w.chaosPods, w.podReader(), w.pods, w.events, w.clock)
	require.NoError(t, err)
	w.r = r
	return w
}

// podReader reads the world's Pods as the operator's cache holds them for
// the reconciler: only those chaospod.PodSelector selects, trimmed by
// chaospod.TrimPod.
func (w *world) podReader() ports.Reader[*corev1.Pod] {
	return trimmedPods{w.pods.Selected(chaospod.PodSelector())}
}

// trimmedPods trims the copies a memory store hands out.
type trimmedPods struct{ ports.Reader[*corev1.Pod] }

func (r trimmedPods) Get(ctx context.Context, key types.NamespacedName) (*corev1.Pod, error) {
	pod, err := r.Reader.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	chaospod.TrimPod(pod)
	return pod, nil
}

func (r trimmedPods) List(ctx context.Context, namespace string, opts ...ports.ListOption) ([]*corev1.Pod, error) {
	pods, err := r.Reader.List(ctx, namespace, opts...)
	for _, p := range pods {
		chaospod.TrimPod(p)
	}
	return pods, err
}

func chaosPod(interval string) *chaosv1.ChaosPod {
	cp := &chaosv1.ChaosPod{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
	if interval != "" {
		cp.Annotations = map[string]string{chaosv1.StopIntervalAnnotation: interval}
	}
	cp.Spec.Template.Labels = map[string]string{"app": "chaos"}
	cp.Spec.Template.Annotations = map[string]string{"note": "x"}
	cp.Spec.Template.Spec.Containers = []corev1.Container{{Name: "c", Image: "busybox"}}
	return cp
}

func (w *world) reconcile(t *testing.T) ports.Result {
	t.Helper()
	res, err := w.r.Reconcile(context.Background(), ports.Request{NamespacedName: key})
	require.NoError(t, err)
	return res
}

func TestCycleCreateRequeueStopRecreate(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	stored, err := w.chaosPods.Create(context.Background(), chaosPod("3s"))
	require.NoError(t, err)
	start := w.clock.Now()

	// No Pod: create it, record the run, requeue exactly at nextStop.
	res := w.reconcile(t)
	assert.Equal(t, 3*time.Second, res.RequeueAfter)
	pod, err := w.pods.Metadata().Get(context.Background(), key)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"app": "chaos", chaospod.PodLabel: key.Name}, pod.Labels, "the template's labels and the ChaosPod's name")
	assert.Equal(t, map[string]string{"note": "x"}, pod.Annotations)
	owner := metav1.GetControllerOf(pod)
	require.NotNil(t, owner)
	assert.Equal(t, stored.UID, owner.UID)
	assert.Equal(t, "ChaosPod", owner.Kind)
	assert.Equal(t, "chaosapps.metamagical.io/v1", owner.APIVersion)
	cp, err := w.chaosPods.Get(context.Background(), key)
	require.NoError(t, err)
	require.NotNil(t, cp.Spec.NextStop)
	assert.True(t, cp.Spec.NextStop.Time.Equal(start.Add(3*time.Second)))
	require.NotNil(t, cp.Status.LastRun)
	assert.True(t, cp.Status.LastRun.Equal(&pod.CreationTimestamp))
	assert.Equal(t, []string{chaospod.ReasonPodCreated}, w.events.Reasons())

	// Before nextStop: nothing changes, requeue for the rest.
	w.clock.Advance(time.Second)
	res = w.reconcile(t)
	assert.Equal(t, 2*time.Second, res.RequeueAfter)
	again, err := w.pods.Metadata().Get(context.Background(), key)
	require.NoError(t, err)
	assert.Equal(t, pod.UID, again.UID)

	// At nextStop: the Pod is stopped.
	w.clock.Advance(2 * time.Second)
	res = w.reconcile(t)
	assert.Zero(t, res.RequeueAfter)
	_, err = w.pods.Metadata().Get(context.Background(), key)
	require.ErrorIs(t, err, ports.ErrNotFound)
	assert.Equal(t, []string{chaospod.ReasonPodCreated, chaospod.ReasonPodStopped}, w.events.Reasons())

	// Next reconcile: a new Pod and a new nextStop, rounded up to the
	// whole second it is stored with, so the requeue is for the stored
	// time exactly.
	w.clock.Advance(100 * time.Millisecond)
	res = w.reconcile(t)
	assert.Equal(t, 3900*time.Millisecond, res.RequeueAfter)
	fresh, err := w.pods.Metadata().Get(context.Background(), key)
	require.NoError(t, err)
	assert.NotEqual(t, pod.UID, fresh.UID)
	cp, err = w.chaosPods.Get(context.Background(), key)
	require.NoError(t, err)
	assert.True(t, cp.Spec.NextStop.Time.Equal(w.clock.Now().Add(3900*time.Millisecond)), "nextStop %s", cp.Spec.NextStop)
	assert.Zero(t, cp.Spec.NextStop.Nanosecond())
}

func TestV1WithoutIntervalGetsTenOrTwentySeconds(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	_, err := w.chaosPods.Create(context.Background(), chaosPod(""))
	require.NoError(t, err)
	res := w.reconcile(t)
	assert.Contains(t, []time.Duration{10 * time.Second, 20 * time.Second}, res.RequeueAfter)
}

func TestNotFoundIsDone(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	res := w.reconcile(t)
	assert.Zero(t, res)
	assert.Empty(t, w.pods.All())
	assert.Empty(t, w.events.Events())
}

func TestConflictIsReturnedAndRetryKeepsUserEdits(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	_, err := w.chaosPods.Create(context.Background(), chaosPod("5s"))
	require.NoError(t, err)
	w.chaosPods.FailNextWrites(ports.ErrConflict)

	_, err = w.r.Reconcile(context.Background(), ports.Request{NamespacedName: key})
	require.ErrorIs(t, err, ports.ErrConflict)

	// Someone edits the ChaosPod meanwhile.
	cp, err := w.chaosPods.Get(context.Background(), key)
	require.NoError(t, err)
	cp.Labels = map[string]string{"edited": "by-user"}
	_, err = w.chaosPods.Update(context.Background(), cp)
	require.NoError(t, err)

	// The retry records the run (the Pod exists already) without
	// stopping it and without losing the edit.
	res := w.reconcile(t)
	assert.Equal(t, 5*time.Second, res.RequeueAfter)
	cp, err = w.chaosPods.Get(context.Background(), key)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"edited": "by-user"}, cp.Labels)
	require.NotNil(t, cp.Status.LastRun)
	assert.Len(t, w.pods.All(), 1)
}

// A Pod of the ChaosPod's name that is not its own is never stopped nor
// replaced: one with the operator's label is read and refused for good;
// one without it is not read at all, its create refused, retried.
func TestForeignPodIsLeftAlone(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		labels   map[string]string
		terminal bool
	}{
		{"labeled as the operator's", map[string]string{chaospod.PodLabel: key.Name}, true},
		{"unlabeled, so not read", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			_, err := w.chaosPods.Create(context.Background(), chaosPod("5s"))
			require.NoError(t, err)
			foreign, err := w.pods.Create(context.Background(), &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name, Labels: tt.labels}})
			require.NoError(t, err)

			for range 2 {
				w.clock.Advance(time.Minute)
				_, err = w.r.Reconcile(context.Background(), ports.Request{NamespacedName: key})
				require.Error(t, err)
				assert.Equal(t, tt.terminal, ports.IsTerminal(err))
			}
			pods := w.pods.All()
			require.Len(t, pods, 1)
			assert.Equal(t, foreign.UID, pods[0].UID, "the same Pod, never stopped")
		})
	}
}

func TestUserMovedNextStopIsHonoured(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	_, err := w.chaosPods.Create(context.Background(), chaosPod("5s"))
	require.NoError(t, err)
	w.reconcile(t)

	cp, err := w.chaosPods.Get(context.Background(), key)
	require.NoError(t, err)
	later := metav1.NewTime(w.clock.Now().Add(30 * time.Minute))
	cp.Spec.NextStop = &later
	_, err = w.chaosPods.Update(context.Background(), cp)
	require.NoError(t, err)

	res := w.reconcile(t)
	assert.Equal(t, 30*time.Minute, res.RequeueAfter)
}

func TestNewRequiresEveryDependency(t *testing.T) {
	t.Parallel()
	_, err := chaospod.New(nil, nil, nil, nil, nil, nil)
	require.Error(t, err)
}

// heldDeletes passes writes through to a Pod writer but holds the Deletes
// of the Pod named hold (of every Pod when hold is empty) until release is
// closed.
type heldDeletes struct {
	ports.Writer[*corev1.Pod]
	hold     string
	deleting chan struct{} // receives when a Delete is held
	release  chan struct{}
}

func (h *heldDeletes) Delete(ctx context.Context, key types.NamespacedName, uid types.UID) error {
	if h.hold != "" && key.Name != h.hold {
		return h.Writer.Delete(ctx, key, uid)
	}
	h.deleting <- struct{}{}
	<-h.release
	return h.Writer.Delete(ctx, key, uid)
}

func TestStartWaitsForTheStopsInFlight(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	held := &heldDeletes{Writer: w.pods, deleting: make(chan struct{}, 1), release: make(chan struct{})}
	r, err := chaospod.New(w.chaosPods, w.chaosPods, w.podReader(), held, w.events, w.clock)
	require.NoError(t, err)
	ctx := context.Background()
	stopping := types.NamespacedName{Namespace: key.Namespace, Name: "stopping"}
	starting := types.NamespacedName{Namespace: key.Namespace, Name: "starting"}
	for _, name := range []string{stopping.Name, starting.Name} {
		cp := chaosPod("1s")
		cp.Name = name
		_, err := w.chaosPods.Create(ctx, cp)
		require.NoError(t, err)
	}
	// "stopping" runs its Pod, which falls due.
	_, err = r.Reconcile(ctx, ports.Request{NamespacedName: stopping})
	require.NoError(t, err)
	w.clock.Advance(time.Second)

	stopped := reconcileAsync(ctx, r, stopping)
	<-held.deleting
	started := reconcileAsync(ctx, r, starting)

	// While the stop is in flight, the start creates nothing.
	select {
	case err := <-started:
		t.Fatalf("start finished while a stop was in flight (err %v)", err)
	case <-time.After(50 * time.Millisecond):
	}
	_, err = w.pods.Metadata().Get(ctx, starting)
	require.ErrorIs(t, err, ports.ErrNotFound)

	close(held.release)
	require.NoError(t, <-stopped)
	require.NoError(t, <-started)
	_, err = w.pods.Metadata().Get(ctx, starting)
	require.NoError(t, err, "the start goes once the stop is done")
	_, err = w.pods.Metadata().Get(ctx, stopping)
	require.ErrorIs(t, err, ports.ErrNotFound)
}

func TestStopEventWaitsForTheOtherStopsInFlight(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	held := &heldDeletes{Writer: w.pods, hold: "slow", deleting: make(chan struct{}, 1), release: make(chan struct{})}
	r, err := chaospod.New(w.chaosPods, w.chaosPods, w.podReader(), held, w.events, w.clock)
	require.NoError(t, err)
	ctx := context.Background()
	slow := types.NamespacedName{Namespace: key.Namespace, Name: "slow"}
	fast := types.NamespacedName{Namespace: key.Namespace, Name: "fast"}
	for _, k := range []types.NamespacedName{slow, fast} {
		cp := chaosPod("1s")
		cp.Name = k.Name
		_, err := w.chaosPods.Create(ctx, cp)
		require.NoError(t, err)
		_, err = r.Reconcile(ctx, ports.Request{NamespacedName: k})
		require.NoError(t, err)
	}
	w.clock.Advance(time.Second) // both fall due
	stopped := func(k types.NamespacedName) bool {
		for _, e := range w.events.EventsFor(k) {
			if e.Reason == chaospod.ReasonPodStopped {
				return true
			}
		}
		return false
	}

	slowDone := reconcileAsync(ctx, r, slow)
	<-held.deleting
	fastDone := reconcileAsync(ctx, r, fast)

	// fast's Pod is stopped at once, its Event waits for slow's stop.
	require.Eventually(t, func() bool {
		_, err := w.pods.Metadata().Get(ctx, fast)
		return errors.Is(err, ports.ErrNotFound)
	}, 5*time.Second, 5*time.Millisecond)
	select {
	case err := <-fastDone:
		t.Fatalf("the stop's reconcile finished while another stop was in flight (err %v)", err)
	case <-time.After(50 * time.Millisecond):
	}
	assert.False(t, stopped(fast), "the stop's Event was recorded while another stop was in flight")

	close(held.release)
	require.NoError(t, <-slowDone)
	require.NoError(t, <-fastDone)
	assert.True(t, stopped(fast))
	assert.True(t, stopped(slow))
}

// reconcileAsync reconciles key in a goroutine; the channel receives its
// error.
func reconcileAsync(ctx context.Context, r *chaospod.Reconciler, key types.NamespacedName) <-chan error {
	done := make(chan error, 1)
	go func() {
		_, err := r.Reconcile(ctx, ports.Request{NamespacedName: key})
		done <- err
	}()
	return done
}

// The ChaosPod's name label wins over a template label of the same key,
// so that the admission policies find the Pod's ChaosPod whatever the
// template says, and the template is not changed.
func TestPodForStampsTheChaosPodLabel(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		labels map[string]string
		want   map[string]string
	}{
		{"no template labels", nil, map[string]string{chaospod.PodLabel: key.Name}},
		{"template labels kept", map[string]string{"app": "chaos"}, map[string]string{"app": "chaos", chaospod.PodLabel: key.Name}},
		{"the key overridden", map[string]string{chaospod.PodLabel: "another"}, map[string]string{chaospod.PodLabel: key.Name}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cp := chaosPod("")
			cp.Spec.Template.Labels = tt.labels
			before := cp.DeepCopy()
			pod := chaospod.PodFor(cp)
			assert.Equal(t, tt.want, pod.Labels)
			assert.Equal(t, "chaosapps.metamagical.io/chaospod", chaospod.PodLabel)
			assert.Equal(t, before, cp, "the ChaosPod is not changed")
		})
	}
}
