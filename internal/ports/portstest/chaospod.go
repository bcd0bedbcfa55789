package portstest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	chaosv1 "github.com/hexagonal-operator/operator/api/chaos/v1"
	"github.com/hexagonal-operator/operator/internal/ports"
)

// ChaosPodFixture is one implementation of the ChaosPod ports and a back
// door into the same store. Its functions must be safe for concurrent use.
type ChaosPodFixture struct {
	// Namespace exists; every test uses its own names.
	Namespace string
	Reader    ports.ChaosPodReader
	Writer    ports.ChaosPodWriter
	// Create stores obj as another client would and returns it as stored.
	Create func(ctx context.Context, obj *chaosv1.ChaosPod) (*chaosv1.ChaosPod, error)
}

// RunChaosPodStore checks the behaviour that the domain relies on from
// ports.ChaosPodReader and ports.ChaosPodWriter.
func RunChaosPodStore(t *testing.T, newFixture func(t *testing.T) ChaosPodFixture) {
	t.Helper()
	tests := []struct {
		name string
		run  func(t *testing.T, f ChaosPodFixture)
	}{
		{"GetMissingIsNotFound", chaosGetMissing},
		{"CreatedBecomesReadable", chaosCreatedReadable},
		{"SpecAndStatusAreWrittenSeparately", chaosSpecAndStatus},
		{"StaleWriteConflicts", chaosStaleConflicts},
		{"UpdateMissingIsNotFound", chaosUpdateMissing},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.run(t, newFixture(t))
		})
	}
}

func newChaosPod(ns, name string) *chaosv1.ChaosPod {
	cp := &chaosv1.ChaosPod{
		TypeMeta:   metav1.TypeMeta{APIVersion: chaosv1.SchemeGroupVersion.String(), Kind: chaosv1.Kind},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
	}
	cp.Spec.Template.Spec.Containers = []corev1.Container{{Name: "c", Image: "busybox"}}
	return cp
}

func chaosGetMissing(t *testing.T, f ChaosPodFixture) {
	_, err := f.Reader.GetChaosPod(t.Context(), types.NamespacedName{Namespace: f.Namespace, Name: "missing"})
	require.ErrorIs(t, err, ports.ErrNotFound)
}

func eventuallyChaosPod(t *testing.T, f ChaosPodFixture, key types.NamespacedName, cond func(*chaosv1.ChaosPod) bool) *chaosv1.ChaosPod {
	t.Helper()
	var got *chaosv1.ChaosPod
	require.Eventually(t, func() bool {
		cp, err := f.Reader.GetChaosPod(t.Context(), key)
		if err != nil {
			return false
		}
		got = cp
		return cond(cp)
	}, waitFor, tick)
	return got.DeepCopy()
}

func chaosCreatedReadable(t *testing.T, f ChaosPodFixture) {
	stored, err := f.Create(t.Context(), newChaosPod(f.Namespace, "readable"))
	require.NoError(t, err)
	got := eventuallyChaosPod(t, f, types.NamespacedName{Namespace: f.Namespace, Name: "readable"},
		func(*chaosv1.ChaosPod) bool { return true })
	assert.Equal(t, stored.UID, got.UID)
	assert.Equal(t, "busybox", got.Spec.Template.Spec.Containers[0].Image)
}

func chaosSpecAndStatus(t *testing.T, f ChaosPodFixture) {
	key := types.NamespacedName{Namespace: f.Namespace, Name: "split"}
	stored, err := f.Create(t.Context(), newChaosPod(key.Namespace, key.Name))
	require.NoError(t, err)
	stop := metav1.NewTime(time.Now().Add(time.Hour).Truncate(time.Second))
	run := metav1.NewTime(time.Now().Truncate(time.Second))

	// A spec write ignores status.
	next := stored.DeepCopy()
	next.Spec.NextStop = &stop
	next.Status.LastRun = &run
	updated, err := f.Writer.UpdateChaosPod(t.Context(), next)
	require.NoError(t, err)
	require.NotNil(t, updated.Spec.NextStop)
	assert.True(t, stop.Equal(updated.Spec.NextStop))
	assert.Nil(t, updated.Status.LastRun)

	// A status write ignores spec.
	next = updated.DeepCopy()
	next.Spec.NextStop = nil
	next.Status.LastRun = &run
	updated, err = f.Writer.UpdateChaosPodStatus(t.Context(), next)
	require.NoError(t, err)
	require.NotNil(t, updated.Status.LastRun)
	assert.True(t, run.Equal(updated.Status.LastRun))
	require.NotNil(t, updated.Spec.NextStop)

	got := eventuallyChaosPod(t, f, key, func(cp *chaosv1.ChaosPod) bool { return cp.Status.LastRun != nil })
	assert.True(t, stop.Equal(got.Spec.NextStop))
}

func chaosStaleConflicts(t *testing.T, f ChaosPodFixture) {
	stored, err := f.Create(t.Context(), newChaosPod(f.Namespace, "stale"))
	require.NoError(t, err)
	first := stored.DeepCopy()
	first.Labels = map[string]string{"first": "yes"}
	_, err = f.Writer.UpdateChaosPod(t.Context(), first)
	require.NoError(t, err)

	second := stored.DeepCopy()
	second.Labels = map[string]string{"second": "yes"}
	_, err = f.Writer.UpdateChaosPod(t.Context(), second)
	require.ErrorIs(t, err, ports.ErrConflict)
	run := metav1.NewTime(time.Now().Truncate(time.Second))
	second.Status.LastRun = &run
	_, err = f.Writer.UpdateChaosPodStatus(t.Context(), second)
	require.ErrorIs(t, err, ports.ErrConflict)
}

func chaosUpdateMissing(t *testing.T, f ChaosPodFixture) {
	cp := newChaosPod(f.Namespace, "never-created")
	cp.ResourceVersion = "1"
	_, err := f.Writer.UpdateChaosPod(t.Context(), cp)
	require.ErrorIs(t, err, ports.ErrNotFound)
}
