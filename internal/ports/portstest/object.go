package portstest

import (
	"context"
	"fmt"
	"maps"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/hexagonal-operator/operator/internal/ports"
)

// ObjectFixture is one implementation of the generic object ports, for
// ConfigMaps, and a back door into the same store. Its functions must be
// safe for concurrent use: the suite's tests run in parallel.
type ObjectFixture struct {
	// Namespace is where the suite creates ConfigMaps; it exists.
	Namespace string
	// Reader and Writer are under test.
	Reader ports.ObjectReader[*corev1.ConfigMap]
	Writer ports.AnnotationWriter

	// Create stores cm as another client would.
	Create func(ctx context.Context, cm *corev1.ConfigMap) error
	// SetForeignAnnotation sets one annotation as another client would,
	// not through Writer.
	SetForeignAnnotation func(ctx context.Context, key types.NamespacedName, annotation, value string) error
	// Delete removes a ConfigMap as another client would.
	Delete func(ctx context.Context, key types.NamespacedName) error
	// Get reads the store's authoritative state, bypassing any cache.
	Get func(ctx context.Context, key types.NamespacedName) (*corev1.ConfigMap, error)
}

// RunObjectStore checks the behaviour that a domain relies on from
// ports.ObjectReader and ports.AnnotationWriter. newFixture is called once
// per test.
func RunObjectStore(t *testing.T, newFixture func(t *testing.T) ObjectFixture) {
	t.Helper()
	tests := []struct {
		name string
		run  func(t *testing.T, f ObjectFixture)
	}{
		{"GetMissingIsNotFound", objGetMissing},
		{"GetReturnsTheStoredObject", objGetStored},
		{"GetAfterDeleteIsNotFound", objGetAfterDelete},
		{"SetAddsAnnotationAndKeepsEverythingElse", objSetAdds},
		{"SetOverwritesOnlyTheGivenKeys", objSetOverwrites},
		{"SetEmptyWritesNothing", objSetEmpty},
		{"SetKeepsForeignAnnotationTheReaderHasNotSeen", objSetKeepsUnseen},
		{"ConcurrentWritersAllSurvive", objConcurrentWriters},
		{"SetOnMissingIsNotFound", objSetOnMissing},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.run(t, newFixture(t))
		})
	}
}

func objGetMissing(t *testing.T, f ObjectFixture) {
	_, err := f.Reader.GetObject(t.Context(), f.key("missing"))
	require.ErrorIs(t, err, ports.ErrNotFound)
	assertOnlyPortError(t, err, ports.ErrNotFound)
}

func objGetStored(t *testing.T, f ObjectFixture) {
	key := f.key("seeded")
	f.create(t, key, map[string]string{"note": "kept"})

	var got *corev1.ConfigMap
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		var err error
		got, err = f.Reader.GetObject(t.Context(), key)
		assert.NoError(c, err)
	}, waitFor, tick, "the reader sees the created ConfigMap")
	assert.Equal(t, key.Name, got.Name)
	assert.Equal(t, key.Namespace, got.Namespace)
	assert.Equal(t, map[string]string{"note": "kept"}, got.Annotations)
	assert.Equal(t, map[string]string{"k": "v"}, got.Data)
	assert.NotEmpty(t, got.ResourceVersion)
}

func objGetAfterDelete(t *testing.T, f ObjectFixture) {
	key := f.key("deleted")
	f.create(t, key, nil)
	f.waitSeen(t, key)

	require.NoError(t, f.Delete(t.Context(), key))

	require.EventuallyWithT(t, func(c *assert.CollectT) {
		_, err := f.Reader.GetObject(t.Context(), key)
		assert.ErrorIs(c, err, ports.ErrNotFound)
	}, waitFor, tick, "the reader forgets the deleted ConfigMap")
}

func objSetAdds(t *testing.T, f ObjectFixture) {
	key := f.key("annotated")
	f.create(t, key, map[string]string{"note": "kept"})

	require.NoError(t, f.Writer.SetAnnotations(t.Context(), key, map[string]string{"hello": "world"}))

	got := f.get(t, key)
	assert.Equal(t, map[string]string{"note": "kept", "hello": "world"}, got.Annotations)
	assert.Equal(t, map[string]string{"app": "web"}, got.Labels, "labels untouched")
	assert.Equal(t, map[string]string{"k": "v"}, got.Data, "data untouched")
}

func objSetOverwrites(t *testing.T, f ObjectFixture) {
	key := f.key("reannotated")
	f.create(t, key, map[string]string{"note": "kept", "hello": "moon"})

	require.NoError(t, f.Writer.SetAnnotations(t.Context(), key, map[string]string{"hello": "world", "team": "a"}))

	assert.Equal(t, map[string]string{"note": "kept", "hello": "world", "team": "a"}, f.get(t, key).Annotations)
}

func objSetEmpty(t *testing.T, f ObjectFixture) {
	key := f.key("untouched")
	f.create(t, key, map[string]string{"note": "kept"})
	before := f.get(t, key).ResourceVersion

	require.NoError(t, f.Writer.SetAnnotations(t.Context(), key, nil))

	assert.Equal(t, before, f.get(t, key).ResourceVersion, "no write")
}

// objSetKeepsUnseen is the race the writer's contract exists for: someone
// annotates the object after the reader's last view of it.
func objSetKeepsUnseen(t *testing.T, f ObjectFixture) {
	key := f.key("raced")
	f.create(t, key, nil)
	f.waitSeen(t, key)

	require.NoError(t, f.SetForeignAnnotation(t.Context(), key, "foreign", "yes"))
	require.NoError(t, f.Writer.SetAnnotations(t.Context(), key, map[string]string{"hello": "world"}))

	assert.Equal(t, map[string]string{"foreign": "yes", "hello": "world"}, f.get(t, key).Annotations)
}

func objConcurrentWriters(t *testing.T, f ObjectFixture) {
	key := f.key("busy")
	f.create(t, key, nil)
	f.waitSeen(t, key)

	const writers = 4
	want := map[string]string{}
	errs := make(chan error, 2*writers)
	var wg sync.WaitGroup
	for i := range writers {
		foreign, ours := fmt.Sprintf("foreign-%d", i), fmt.Sprintf("ours-%d", i)
		want[foreign], want[ours] = "yes", "yes"
		wg.Go(func() { errs <- f.SetForeignAnnotation(t.Context(), key, foreign, "yes") })
		wg.Go(func() { errs <- f.Writer.SetAnnotations(t.Context(), key, map[string]string{ours: "yes"}) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}

	assert.Equal(t, want, f.get(t, key).Annotations)
}

func objSetOnMissing(t *testing.T, f ObjectFixture) {
	err := f.Writer.SetAnnotations(t.Context(), f.key("absent"), map[string]string{"hello": "world"})
	require.ErrorIs(t, err, ports.ErrNotFound)
	assertOnlyPortError(t, err, ports.ErrNotFound)
}

func (f ObjectFixture) key(name string) types.NamespacedName {
	return types.NamespacedName{Namespace: f.Namespace, Name: "contract-" + name}
}

func (f ObjectFixture) create(t *testing.T, key types.NamespacedName, annotations map[string]string) {
	t.Helper()
	require.NoError(t, f.Create(t.Context(), NewConfigMap(key, annotations)), "create %s", key)
}

func (f ObjectFixture) get(t *testing.T, key types.NamespacedName) *corev1.ConfigMap {
	t.Helper()
	cm, err := f.Get(t.Context(), key)
	require.NoError(t, err, "read %s from the store", key)
	return cm
}

func (f ObjectFixture) waitSeen(t *testing.T, key types.NamespacedName) {
	t.Helper()
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		_, err := f.Reader.GetObject(t.Context(), key)
		assert.NoError(c, err)
	}, waitFor, tick, "the reader sees %s", key)
}

// NewConfigMap returns a ConfigMap with the label app=web, the data k=v and
// the given annotations.
func NewConfigMap(key types.NamespacedName, annotations map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:   key.Namespace,
			Name:        key.Name,
			Labels:      map[string]string{"app": "web"},
			Annotations: maps.Clone(annotations),
		},
		Data: map[string]string{"k": "v"},
	}
}
