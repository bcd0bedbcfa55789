package portstest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/hexagonal-operator/operator/internal/ports"
)

// Timings of the suites: generous, because a loaded CI machine runs several
// API servers at once; Eventually returns as soon as the condition holds.
const (
	waitFor = 30 * time.Second
	tick    = 20 * time.Millisecond
)

// ReplicaSetFixture is one implementation of the ReplicaSet ports and a back
// door into the same store. Its functions must be safe for concurrent use:
// the suite's tests run in parallel.
type ReplicaSetFixture struct {
	// Namespace is where the suite creates ReplicaSets; it exists. Fixtures
	// may share it: every test uses its own names.
	Namespace string
	// Reader and Labeler are under test.
	Reader  ports.ReplicaSetReader
	Labeler ports.ReplicaSetLabeler

	// Create stores rs as another client would.
	Create func(ctx context.Context, rs *appsv1.ReplicaSet) error
	// SetForeignLabel sets one label as another client would, not through
	// Labeler.
	SetForeignLabel func(ctx context.Context, key types.NamespacedName, label, value string) error
	// Delete removes a ReplicaSet as another client would.
	Delete func(ctx context.Context, key types.NamespacedName) error
	// Get reads the store's authoritative state, bypassing any cache.
	Get func(ctx context.Context, key types.NamespacedName) (*appsv1.ReplicaSet, error)
}

// RunReplicaSetStore checks the behaviour that the domain relies on from
// ports.ReplicaSetReader and ports.ReplicaSetLabeler. newFixture is called
// once per test.
func RunReplicaSetStore(t *testing.T, newFixture func(t *testing.T) ReplicaSetFixture) {
	t.Helper()
	tests := []struct {
		name string
		run  func(t *testing.T, f ReplicaSetFixture)
	}{
		{"GetMissingIsNotFound", getMissingIsNotFound},
		{"GetReturnsTheStoredReplicaSet", getReturnsStored},
		{"GetAfterDeleteIsNotFound", getAfterDeleteIsNotFound},
		{"SetAddsLabelAndKeepsEverythingElse", setAddsLabel},
		{"SetOverwritesOnlyTheGivenKeys", setOverwritesGivenKeys},
		{"SetPresentValueChangesNothing", setPresentValue},
		{"SetKeepsForeignLabelTheReaderHasNotSeen", setKeepsUnseenForeignLabel},
		{"ConcurrentWritersAllSurvive", concurrentWriters},
		{"SetOnMissingIsNotFound", setOnMissingIsNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.run(t, newFixture(t))
		})
	}
}

func getMissingIsNotFound(t *testing.T, f ReplicaSetFixture) {
	_, err := f.Reader.GetReplicaSet(t.Context(), f.key("missing"))
	require.ErrorIs(t, err, ports.ErrNotFound)
	assertOnlyPortError(t, err, ports.ErrNotFound)
}

func getReturnsStored(t *testing.T, f ReplicaSetFixture) {
	key := f.key("seeded")
	f.create(t, key, map[string]string{"app": "web"})

	var got *appsv1.ReplicaSet
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		var err error
		got, err = f.Reader.GetReplicaSet(t.Context(), key)
		assert.NoError(c, err)
	}, waitFor, tick, "the reader sees the created ReplicaSet")
	assert.Equal(t, key.Namespace, got.Namespace)
	assert.Equal(t, key.Name, got.Name)
	assert.Equal(t, map[string]string{"app": "web"}, got.Labels)
	assert.Equal(t, map[string]string{"note": "kept"}, got.Annotations)
	assert.Equal(t, int32(0), *got.Spec.Replicas)
	assert.NotEmpty(t, got.ResourceVersion)
}

func getAfterDeleteIsNotFound(t *testing.T, f ReplicaSetFixture) {
	key := f.key("deleted")
	f.create(t, key, nil)
	f.waitSeen(t, key)

	require.NoError(t, f.Delete(t.Context(), key))

	require.EventuallyWithT(t, func(c *assert.CollectT) {
		_, err := f.Reader.GetReplicaSet(t.Context(), key)
		assert.ErrorIs(c, err, ports.ErrNotFound)
	}, waitFor, tick, "the reader forgets the deleted ReplicaSet")
}

func setAddsLabel(t *testing.T, f ReplicaSetFixture) {
	key := f.key("labeled")
	f.create(t, key, map[string]string{"app": "web", "tier": "front"})

	require.NoError(t, f.Labeler.SetReplicaSetLabels(t.Context(), key, map[string]string{"hello": "world"}))

	got := f.get(t, key)
	assert.Equal(t, map[string]string{"app": "web", "tier": "front", "hello": "world"}, got.Labels)
	assert.Equal(t, map[string]string{"note": "kept"}, got.Annotations, "annotations untouched")
	assert.Equal(t, int32(0), *got.Spec.Replicas, "spec untouched")
	assert.Equal(t, map[string]string{"app": "web"}, got.Spec.Selector.MatchLabels, "spec untouched")
}

func setOverwritesGivenKeys(t *testing.T, f ReplicaSetFixture) {
	key := f.key("relabeled")
	f.create(t, key, map[string]string{"app": "web", "hello": "moon", "tier": "front"})

	require.NoError(t, f.Labeler.SetReplicaSetLabels(t.Context(), key, map[string]string{"hello": "world", "team": "a"}))

	assert.Equal(t, map[string]string{"app": "web", "hello": "world", "tier": "front", "team": "a"}, f.get(t, key).Labels)
}

func setPresentValue(t *testing.T, f ReplicaSetFixture) {
	key := f.key("already")
	f.create(t, key, map[string]string{"app": "web", "hello": "world"})

	require.NoError(t, f.Labeler.SetReplicaSetLabels(t.Context(), key, map[string]string{"hello": "world"}))

	assert.Equal(t, map[string]string{"app": "web", "hello": "world"}, f.get(t, key).Labels)
}

// setKeepsUnseenForeignLabel is the race the labeler's contract exists for:
// someone labels the ReplicaSet after the reader's last view of it, and a
// write based on that view (an update) would drop or conflict on it.
func setKeepsUnseenForeignLabel(t *testing.T, f ReplicaSetFixture) {
	key := f.key("raced")
	f.create(t, key, map[string]string{"app": "web"})
	f.waitSeen(t, key)

	require.NoError(t, f.SetForeignLabel(t.Context(), key, "foreign", "yes"))
	require.NoError(t, f.Labeler.SetReplicaSetLabels(t.Context(), key, map[string]string{"hello": "world"}))

	assert.Equal(t, map[string]string{"app": "web", "foreign": "yes", "hello": "world"}, f.get(t, key).Labels)
}

func concurrentWriters(t *testing.T, f ReplicaSetFixture) {
	key := f.key("busy")
	f.create(t, key, map[string]string{"app": "web"})
	f.waitSeen(t, key)

	const writers = 4
	want := map[string]string{"app": "web"}
	errs := make(chan error, 2*writers)
	var wg sync.WaitGroup
	for i := range writers {
		foreign, ours := fmt.Sprintf("foreign-%d", i), fmt.Sprintf("ours-%d", i)
		want[foreign], want[ours] = "yes", "yes"
		wg.Go(func() { errs <- f.SetForeignLabel(t.Context(), key, foreign, "yes") })
		wg.Go(func() {
			errs <- f.Labeler.SetReplicaSetLabels(t.Context(), key, map[string]string{ours: "yes"})
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}

	assert.Equal(t, want, f.get(t, key).Labels)
}

func setOnMissingIsNotFound(t *testing.T, f ReplicaSetFixture) {
	err := f.Labeler.SetReplicaSetLabels(t.Context(), f.key("absent"), map[string]string{"hello": "world"})
	require.ErrorIs(t, err, ports.ErrNotFound)
	assertOnlyPortError(t, err, ports.ErrNotFound)
}

// assertOnlyPortError checks that err matches want and no other port error,
// so that a caller's errors.Is switch takes the right branch.
func assertOnlyPortError(t *testing.T, err, want error) {
	t.Helper()
	for _, pe := range []error{ports.ErrNotFound, ports.ErrConflict, ports.ErrAlreadyExists, ports.ErrInvalid, ports.ErrForbidden} {
		assert.Equal(t, pe == want, errors.Is(err, pe), "errors.Is(err, %v) for %v", pe, err)
	}
}

func (f ReplicaSetFixture) key(name string) types.NamespacedName {
	return types.NamespacedName{Namespace: f.Namespace, Name: "contract-" + name}
}

func (f ReplicaSetFixture) create(t *testing.T, key types.NamespacedName, labels map[string]string) {
	t.Helper()
	require.NoError(t, f.Create(t.Context(), NewReplicaSet(key, labels)), "create %s", key)
}

func (f ReplicaSetFixture) get(t *testing.T, key types.NamespacedName) *appsv1.ReplicaSet {
	t.Helper()
	rs, err := f.Get(t.Context(), key)
	require.NoError(t, err, "read %s from the store", key)
	return rs
}

func (f ReplicaSetFixture) waitSeen(t *testing.T, key types.NamespacedName) {
	t.Helper()
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		_, err := f.Reader.GetReplicaSet(t.Context(), key)
		assert.NoError(c, err)
	}, waitFor, tick, "the reader sees %s", key)
}

// NewReplicaSet returns a ReplicaSet that a real API server accepts, with
// no replicas (so no Pods appear) and the annotation note=kept.
func NewReplicaSet(key types.NamespacedName, labels map[string]string) *appsv1.ReplicaSet {
	selector := map[string]string{"app": "web"}
	return &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:   key.Namespace,
			Name:        key.Name,
			Labels:      maps.Clone(labels),
			Annotations: map[string]string{"note": "kept"},
		},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: new(int32),
			Selector: &metav1.LabelSelector{MatchLabels: selector},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: maps.Clone(selector)},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "registry.k8s.io/pause:3.10"}}},
			},
		},
	}
}
