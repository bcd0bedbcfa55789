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

	// Created and recorded: True until nextStop, for the generation the
	// nextStop write made, in the same status write as lastRun.
	w.reconcile(t)
	c, cp := w.readyOf(t)
	assert.Equal(t, metav1.ConditionTrue, c.Status)
	assert.Equal(t, chaosv1.ReasonPodRunning, c.Reason)
	assert.Equal(t, cp.Generation, c.ObservedGeneration)
	assert.Contains(t, c.Message, cp.Spec.NextStop.UTC().Format(time.RFC3339))
	assert.True(t, c.LastTransitionTime.Equal(&metav1.Time{Time: w.clock.Now()}))
	running := c.LastTransitionTime

	// Nothing changed: nothing written.
	w.clock.Advance(time.Second)
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
	pod, err := w.pods.Get(ctx, key)
	require.NoError(t, err)
	pod.DeletionTimestamp = &metav1.Time{Time: w.clock.Now()}
	_, err = w.pods.Update(ctx, pod)
	require.NoError(t, err)
	w.reconcile(t)
	c, _ = w.readyOf(t)
	assert.Equal(t, metav1.ConditionFalse, c.Status)
	assert.Equal(t, chaosv1.ReasonPodReplacing, c.Reason)

	// Gone and started again: True with the new stop.
	require.NoError(t, w.pods.Delete(ctx, key, ""))
	w.clock.Advance(time.Second)
	w.reconcile(t)
	c, cp = w.readyOf(t)
	assert.Equal(t, metav1.ConditionTrue, c.Status)
	assert.Equal(t, cp.Generation, c.ObservedGeneration)
	assert.Contains(t, c.Message, cp.Spec.NextStop.UTC().Format(time.RFC3339))
	assert.True(t, c.LastTransitionTime.Equal(&metav1.Time{Time: w.clock.Now()}))
	assert.Empty(t, w.warnings())
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

			// Admitted at last: Ready.
			w.reconcile(t)
			c, _ = w.readyOf(t)
			assert.Equal(t, metav1.ConditionTrue, c.Status)
			assert.Equal(t, chaosv1.ReasonPodRunning, c.Reason)
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

func TestForeignPodIsAWarningAndNotReady(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	_, err := w.chaosPods.Create(ctx, chaosPod("5s"))
	require.NoError(t, err)
	_, err = w.pods.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}})
	require.NoError(t, err)

	_, err = w.r.Reconcile(ctx, ports.Request{NamespacedName: key})
	require.Error(t, err)
	assert.True(t, ports.IsTerminal(err))
	c, _ := w.readyOf(t)
	assert.Equal(t, metav1.ConditionFalse, c.Status)
	assert.Equal(t, chaosv1.ReasonPodNotControlled, c.Reason)
	warnings := w.warnings()
	require.Len(t, warnings, 1)
	assert.Equal(t, chaospod.ReasonPodNotControlled, warnings[0].Reason)
	assert.Contains(t, warnings[0].Note, "not controlled")
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
