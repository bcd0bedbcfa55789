package chaospod_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	chaosv1 "github.com/hexagonal-operator/operator/api/chaos/v1"
	"github.com/hexagonal-operator/operator/internal/adapters/memory"
	"github.com/hexagonal-operator/operator/internal/domain/chaospod"
	"github.com/hexagonal-operator/operator/internal/ports"
)

// readyOf is the Ready condition of the stored ChaosPod, and the object.
func (w *world) readyOf(t *testing.T) (metav1.Condition, *chaosv1.ChaosPod) {
	t.Helper()
	cp, err := w.chaosPods.Get(context.Background(), key)
	require.NoError(t, err)
	for _, c := range cp.Status.Conditions {
		if c.Type == chaosv1.ConditionReady {
			return c, cp
		}
	}
	t.Fatalf("no Ready condition in %+v", cp.Status)
	return metav1.Condition{}, nil
}

func (w *world) warnings() []memory.Event {
	var out []memory.Event
	for _, e := range w.events.EventsFor(key) {
		if e.Type == ports.EventTypeWarning {
			out = append(out, e)
		}
	}
	return out
}

func TestReadyFollowsThePodThroughItsCycle(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	_, err := w.chaosPods.Create(ctx, chaosPod("3s"))
	require.NoError(t, err)

	// Created and recorded: False while the Pod is Pending, for the
	// generation the nextStop write made, in the same status write as
	// lastRun.
	w.reconcile(t)
	c, cp := w.readyOf(t)
	assert.Equal(t, metav1.ConditionFalse, c.Status)
	assert.Equal(t, chaosv1.ReasonPodPending, c.Reason)
	assert.Equal(t, "Pod chaos is Pending: not scheduled to a node yet", c.Message)
	assert.Equal(t, cp.Generation, c.ObservedGeneration)
	assert.True(t, c.LastTransitionTime.Equal(&metav1.Time{Time: w.clock.Now()}))
	require.NotNil(t, cp.Status.LastRun)

	// The Pod runs and is ready: True until nextStop.
	w.clock.Advance(time.Second)
	w.setPodStatus(t, runningReady())
	w.reconcile(t)
	c, cp = w.readyOf(t)
	assert.Equal(t, metav1.ConditionTrue, c.Status)
	assert.Equal(t, chaosv1.ReasonPodRunning, c.Reason)
	assert.Equal(t, cp.Generation, c.ObservedGeneration)
	assert.Contains(t, c.Message, cp.Spec.NextStop.UTC().Format(time.RFC3339))
	assert.True(t, c.LastTransitionTime.Equal(&metav1.Time{Time: w.clock.Now()}))
	running := c.LastTransitionTime

	// Nothing changed: nothing written.
	w.reconcile(t)
	_, again := w.readyOf(t)
	assert.Equal(t, cp.ResourceVersion, again.ResourceVersion, "a repeated reconcile wrote the ChaosPod")

	// A user's edit makes a generation; Ready is stated for it, and stays
	// True since its last transition.
	again.Spec.Template.Labels = map[string]string{"app": "edited"}
	_, err = w.chaosPods.Update(ctx, again)
	require.NoError(t, err)
	w.reconcile(t)
	c, cp = w.readyOf(t)
	assert.Equal(t, cp.Generation, c.ObservedGeneration)
	assert.Equal(t, metav1.ConditionTrue, c.Status)
	assert.True(t, c.LastTransitionTime.Equal(&running))

	// The Pod terminating after its stop: being replaced.
	w.clock.Advance(time.Second)
	pod, err := w.pods.Get(ctx, key)
	require.NoError(t, err)
	pod.DeletionTimestamp = &metav1.Time{Time: w.clock.Now()}
	_, err = w.pods.Update(ctx, pod)
	require.NoError(t, err)
	w.reconcile(t)
	c, _ = w.readyOf(t)
	assert.Equal(t, metav1.ConditionFalse, c.Status)
	assert.Equal(t, chaosv1.ReasonPodReplacing, c.Reason)
	replacing := c.LastTransitionTime

	// Gone and started again: Pending, with the new stop, and still False
	// since the stop.
	require.NoError(t, w.pods.Delete(ctx, key, ""))
	w.clock.Advance(time.Second)
	w.reconcile(t)
	c, cp = w.readyOf(t)
	assert.Equal(t, metav1.ConditionFalse, c.Status)
	assert.Equal(t, chaosv1.ReasonPodPending, c.Reason)
	assert.Equal(t, cp.Generation, c.ObservedGeneration)
	assert.True(t, c.LastTransitionTime.Equal(&replacing))
	assert.Empty(t, w.warnings())
}

// setPodStatus writes the status of the ChaosPod's Pod, as the kubelet
// and the scheduler do.
func (w *world) setPodStatus(t *testing.T, status corev1.PodStatus) {
	t.Helper()
	pod, err := w.pods.Get(context.Background(), key)
	require.NoError(t, err)
	pod.Status = status
	_, err = w.pods.UpdateStatus(context.Background(), pod)
	require.NoError(t, err)
}

func runningReady() corev1.PodStatus {
	return corev1.PodStatus{
		Phase: corev1.PodRunning,
		Conditions: []corev1.PodCondition{
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue},
			{Type: corev1.PodReady, Status: corev1.ConditionTrue},
		},
		ContainerStatuses: []corev1.ContainerStatus{{Name: "c", Ready: true, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}},
	}
}

func waiting(reason, message string, restarts int32) corev1.ContainerStatus {
	return corev1.ContainerStatus{Name: "c", RestartCount: restarts, State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: message}}}
}

// podStates are Pods as users meet them, the Ready condition each shows,
// and what its message must say.
var podStates = []struct {
	name     string
	status   corev1.PodStatus
	ready    metav1.ConditionStatus
	reason   string
	messages []string
}{
	{"created, no scheduler yet", corev1.PodStatus{Phase: corev1.PodPending}, metav1.ConditionFalse, chaosv1.ReasonPodPending,
		[]string{"Pod chaos is Pending: not scheduled to a node yet"}},
	{"unschedulable", corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{
		Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable", Message: "0/3 nodes are available: 3 Insufficient cpu.",
	}}}, metav1.ConditionFalse, chaosv1.ReasonPodPending,
		[]string{"Pod chaos is Pending: not scheduled: Unschedulable: 0/3 nodes are available: 3 Insufficient cpu."}},
	{"containers being created", corev1.PodStatus{Phase: corev1.PodPending,
		Conditions:        []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}},
		ContainerStatuses: []corev1.ContainerStatus{waiting("ContainerCreating", "", 0)},
	}, metav1.ConditionFalse, chaosv1.ReasonPodPending, []string{"Pod chaos is Pending: container c is waiting: ContainerCreating"}},
	{"a missing Secret", corev1.PodStatus{Phase: corev1.PodPending,
		ContainerStatuses: []corev1.ContainerStatus{waiting("CreateContainerConfigError", `secret "token" not found`, 0)},
	}, metav1.ConditionFalse, chaosv1.ReasonPodPending, []string{`container c is waiting: CreateContainerConfigError: secret "token" not found`}},
	{"an init container runs", corev1.PodStatus{Phase: corev1.PodPending,
		InitContainerStatuses: []corev1.ContainerStatus{{Name: "setup", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}},
		ContainerStatuses:     []corev1.ContainerStatus{waiting("PodInitializing", "", 0)},
	}, metav1.ConditionFalse, chaosv1.ReasonPodPending, []string{"Pod chaos is Pending: init container setup is running"}},
	{"an image that cannot be pulled", corev1.PodStatus{Phase: corev1.PodPending,
		ContainerStatuses: []corev1.ContainerStatus{waiting("ErrImagePull", `failed to pull image "busybox:nope": not found`, 0)},
	}, metav1.ConditionFalse, chaosv1.ReasonPodImagePullFailed,
		[]string{`Pod chaos cannot pull the image of container c: ErrImagePull: failed to pull image "busybox:nope": not found`}},
	{"backing off the pull", corev1.PodStatus{Phase: corev1.PodPending,
		ContainerStatuses: []corev1.ContainerStatus{waiting("ImagePullBackOff", `Back-off pulling image "busybox:nope"`, 0)},
	}, metav1.ConditionFalse, chaosv1.ReasonPodImagePullFailed, []string{`ImagePullBackOff: Back-off pulling image "busybox:nope"`}},
	{"an init container's image", corev1.PodStatus{Phase: corev1.PodPending,
		InitContainerStatuses: []corev1.ContainerStatus{{Name: "setup", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "InvalidImageName"}}}},
	}, metav1.ConditionFalse, chaosv1.ReasonPodImagePullFailed, []string{"the image of init container setup: InvalidImageName"}},
	{"crash-looping", func() corev1.PodStatus {
		c := waiting("CrashLoopBackOff", "back-off 40s restarting failed container=c pod=chaos_ns(uid)", 4)
		c.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{Reason: "Error", ExitCode: 1}
		return corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{c},
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "ContainersNotReady"}}}
	}(), metav1.ConditionFalse, chaosv1.ReasonPodCrashLooping,
		[]string{"Pod chaos: container c is in CrashLoopBackOff (4 restarts, last exit Error (code 1)): back-off 40s restarting failed container=c"}},
	{"running and ready", runningReady(), metav1.ConditionTrue, chaosv1.ReasonPodRunning, []string{"Pod chaos runs until "}},
	{"running, not ready", corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{
		Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "ContainersNotReady", Message: "containers with unready status: [c]",
	}}}, metav1.ConditionFalse, chaosv1.ReasonPodNotReady,
		[]string{"Pod chaos is Running and not ready: ContainersNotReady: containers with unready status: [c]"}},
	{"running, no Ready condition yet", corev1.PodStatus{Phase: corev1.PodRunning}, metav1.ConditionFalse, chaosv1.ReasonPodNotReady,
		[]string{"Pod chaos is Running and not ready"}},
	{"evicted", corev1.PodStatus{Phase: corev1.PodFailed, Reason: "Evicted", Message: "The node was low on resource: memory."},
		metav1.ConditionFalse, chaosv1.ReasonPodFailed, []string{"Pod chaos failed: Evicted: The node was low on resource: memory.; the next one starts after "}},
	{"exited in error", corev1.PodStatus{Phase: corev1.PodFailed, ContainerStatuses: []corev1.ContainerStatus{{Name: "c",
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Error", ExitCode: 2, Message: "bad flag"}}}}},
		metav1.ConditionFalse, chaosv1.ReasonPodFailed, []string{"Pod chaos failed: container c exited: Error (code 2): bad flag"}},
	{"completed", corev1.PodStatus{Phase: corev1.PodSucceeded}, metav1.ConditionFalse, chaosv1.ReasonPodSucceeded,
		[]string{"Pod chaos has completed; the next one starts after "}},
	{"its node lost", corev1.PodStatus{Phase: corev1.PodUnknown, Reason: "NodeLost"}, metav1.ConditionFalse, chaosv1.ReasonPodNotReady,
		[]string{"Pod chaos is Unknown: NodeLost"}},
}

// Ready is the Pod as a user reads it, read through the reader the
// operator wires (selected and trimmed); and whatever the Pod's state, it
// is stopped at nextStop.
func TestReadyIsThePodAsAUserReadsIt(t *testing.T) {
	t.Parallel()
	for _, tt := range podStates {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			ctx := context.Background()
			_, err := w.chaosPods.Create(ctx, chaosPod("10s"))
			require.NoError(t, err)
			w.reconcile(t)
			w.clock.Advance(time.Second)

			w.setPodStatus(t, tt.status)
			res := w.reconcile(t)
			assert.Equal(t, 9*time.Second, res.RequeueAfter, "the stop is where it was")
			c, cp := w.readyOf(t)
			assert.Equal(t, tt.ready, c.Status)
			assert.Equal(t, tt.reason, c.Reason)
			assert.Equal(t, cp.Generation, c.ObservedGeneration)
			for _, m := range tt.messages {
				assert.Contains(t, c.Message, m)
			}
			if tt.ready == metav1.ConditionTrue || tt.reason == chaosv1.ReasonPodFailed || tt.reason == chaosv1.ReasonPodSucceeded {
				assert.Contains(t, c.Message, cp.Spec.NextStop.UTC().Format(time.RFC3339), "the message says when the next one starts")
			}

			// Stopped on time all the same.
			w.clock.Advance(9 * time.Second)
			w.reconcile(t)
			_, err = w.pods.Get(ctx, key)
			require.ErrorIs(t, err, ports.ErrNotFound, "the Pod outlived its stop")
			assert.Contains(t, w.events.Reasons(), chaospod.ReasonPodStopped)
			assert.Empty(t, w.warnings())
		})
	}
}

// A Pod that changes state is a new condition, written once; its status
// and transition time change only when it turns True or False.
func TestReadyChangesWithThePodOnly(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	_, err := w.chaosPods.Create(ctx, chaosPod("1h"))
	require.NoError(t, err)
	w.reconcile(t)
	pending, _ := w.readyOf(t)

	steps := []struct {
		status corev1.PodStatus
		reason string
		moved  bool // lastTransitionTime moves
	}{
		{corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{waiting("ImagePullBackOff", "Back-off", 0)}}, chaosv1.ReasonPodImagePullFailed, false},
		{runningReady(), chaosv1.ReasonPodRunning, true},
		{corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{waiting("CrashLoopBackOff", "back-off 10s", 1)}}, chaosv1.ReasonPodCrashLooping, true},
		{corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{waiting("CrashLoopBackOff", "back-off 20s", 2)}}, chaosv1.ReasonPodCrashLooping, false},
	}
	last := pending.LastTransitionTime
	for i, step := range steps {
		w.clock.Advance(time.Minute)
		w.setPodStatus(t, step.status)
		w.reconcile(t)
		c, cp := w.readyOf(t)
		assert.Equal(t, step.reason, c.Reason, "step %d", i)
		assert.Equal(t, step.moved, !c.LastTransitionTime.Equal(&last), "step %d: lastTransitionTime moved", i)
		last = c.LastTransitionTime

		w.reconcile(t)
		_, again := w.readyOf(t)
		assert.Equal(t, cp.ResourceVersion, again.ResourceVersion, "step %d: written once", i)
	}
}

func TestRefusedCreateIsAWarningAndNotReady(t *testing.T) {
	t.Parallel()
	const because = `pods "chaos" is forbidden: ValidatingAdmissionPolicy 'confine' with binding 'confine' denied request: not from its template`
	tests := []struct {
		name     string
		refusal  error
		terminal bool
	}{
		{"forbidden is retried", ports.ErrForbidden, false},
		{"invalid is retried: a policy whose parameters are not resolved yet refuses as invalid", ports.ErrInvalid, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			ctx := context.Background()
			_, err := w.chaosPods.Create(ctx, chaosPod("3s"))
			require.NoError(t, err)
			refused := &ports.StoreError{Err: tt.refusal, Message: because}
			w.pods.FailNextWrites(refused, refused)

			_, err = w.r.Reconcile(ctx, ports.Request{NamespacedName: key})
			require.ErrorIs(t, err, tt.refusal)
			assert.Equal(t, tt.terminal, ports.IsTerminal(err))
			assert.Empty(t, w.pods.All())
			c, cp := w.readyOf(t)
			assert.Equal(t, metav1.ConditionFalse, c.Status)
			assert.Equal(t, chaosv1.ReasonPodCreateFailed, c.Reason)
			assert.Contains(t, c.Message, because)
			assert.Equal(t, cp.Generation, c.ObservedGeneration)
			warnings := w.warnings()
			require.Len(t, warnings, 1)
			assert.Equal(t, chaospod.ReasonPodCreateFailed, warnings[0].Reason)
			assert.Contains(t, warnings[0].Note, because)

			// Refused again: another Event, no second status write.
			_, err = w.r.Reconcile(ctx, ports.Request{NamespacedName: key})
			require.ErrorIs(t, err, tt.refusal)
			_, again := w.readyOf(t)
			assert.Equal(t, cp.ResourceVersion, again.ResourceVersion)
			assert.Len(t, w.warnings(), 2)

			// Admitted at last: the Pod is created, and Pending.
			w.reconcile(t)
			c, _ = w.readyOf(t)
			assert.Equal(t, metav1.ConditionFalse, c.Status)
			assert.Equal(t, chaosv1.ReasonPodPending, c.Reason)
			assert.Len(t, w.pods.All(), 1)
		})
	}
}

func TestTransientCreateFailureIsNeitherWarnedNorWritten(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	created, err := w.chaosPods.Create(ctx, chaosPod("3s"))
	require.NoError(t, err)
	w.pods.FailNextWrites(&ports.StoreError{Message: "etcdserver: request timed out"})

	_, err = w.r.Reconcile(ctx, ports.Request{NamespacedName: key})
	require.Error(t, err)
	assert.False(t, ports.IsTerminal(err))
	assert.Empty(t, w.warnings())
	cp, err := w.chaosPods.Get(ctx, key)
	require.NoError(t, err)
	assert.Equal(t, created.ResourceVersion, cp.ResourceVersion)
}

// A Pod of the ChaosPod's name that is not its own: read (it carries the
// operator's label) and found to have another controller, or never read
// (it does not) and found by the create it refuses.
func TestForeignPodIsAWarningAndNotReady(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		labels  map[string]string
		message string
	}{
		{"labeled as the operator's", map[string]string{chaospod.PodLabel: key.Name}, "Pod chaos exists and is not controlled by this ChaosPod"},
		{"unlabeled", map[string]string{"app": "someone-elses"},
			"Pod chaos exists and is not one this ChaosPod runs: it lacks the label chaosapps.metamagical.io/chaospod=chaos of the operator's Pods"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			ctx := context.Background()
			_, err := w.chaosPods.Create(ctx, chaosPod("5s"))
			require.NoError(t, err)
			_, err = w.pods.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name, Labels: tt.labels}})
			require.NoError(t, err)

			_, err = w.r.Reconcile(ctx, ports.Request{NamespacedName: key})
			require.Error(t, err)
			c, _ := w.readyOf(t)
			assert.Equal(t, metav1.ConditionFalse, c.Status)
			assert.Equal(t, chaosv1.ReasonPodNotControlled, c.Reason)
			assert.Equal(t, tt.message, c.Message)
			warnings := w.warnings()
			require.Len(t, warnings, 1)
			assert.Equal(t, chaospod.ReasonPodNotControlled, warnings[0].Reason)
			assert.Equal(t, tt.message, warnings[0].Note)

			// Once it is gone, the ChaosPod's own Pod is started.
			require.NoError(t, w.pods.Delete(ctx, key, ""))
			w.reconcile(t)
			c, _ = w.readyOf(t)
			assert.Equal(t, chaosv1.ReasonPodPending, c.Reason)
		})
	}
}

func TestRefusedChaosPodWriteIsTerminalAndWarned(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	_, err := w.chaosPods.Create(ctx, chaosPod("5s"))
	require.NoError(t, err)
	const because = `ChaosPod.chaosapps.metamagical.io "chaos" is invalid: spec.nextStop: Invalid value`
	w.chaosPods.FailNextWrites(&ports.StoreError{Err: ports.ErrInvalid, Message: because})

	_, err = w.r.Reconcile(ctx, ports.Request{NamespacedName: key})
	require.Error(t, err)
	assert.True(t, ports.IsTerminal(err))
	warnings := w.warnings()
	require.Len(t, warnings, 1)
	assert.Equal(t, chaospod.ReasonUpdateFailed, warnings[0].Reason)
	assert.Contains(t, warnings[0].Note, because)
}
