package memory_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	chaosv1 "github.com/hexagonal-operator/operator/api/chaos/v1"
	"github.com/hexagonal-operator/operator/internal/adapters/memory"
	"github.com/hexagonal-operator/operator/internal/ports"
	"github.com/hexagonal-operator/operator/test/portstest"
)

// fixture makes the store all three roles: the reader, the writer under
// test, and someone else writing to the same cluster.
func fixture[T memory.Object](kind portstest.Kind[T]) func(t *testing.T) portstest.Fixture[T, T] {
	return func(*testing.T) portstest.Fixture[T, T] {
		s := memory.NewStore[T](kind.GroupKind)
		return portstest.Fixture[T, T]{Namespace: "contract", Reader: s, Writer: s, Other: s, Get: s.Get}
	}
}

func TestStoreContract(t *testing.T) {
	t.Parallel()
	t.Run("ReplicaSets", func(t *testing.T) {
		t.Parallel()
		portstest.RunObjects(t, portstest.ReplicaSets, fixture(portstest.ReplicaSets))
	})
	t.Run("Pods", func(t *testing.T) {
		t.Parallel()
		portstest.RunObjects(t, portstest.Pods, func(*testing.T) portstest.Fixture[*corev1.Pod, *metav1.PartialObjectMetadata] {
			s := memory.NewStore[*corev1.Pod](portstest.Pods.GroupKind)
			return portstest.Fixture[*corev1.Pod, *metav1.PartialObjectMetadata]{
				Namespace: "contract", Reader: s.Metadata(), Writer: s, Other: s, Get: s.Get,
			}
		})
	})
	t.Run("ChaosPods", func(t *testing.T) {
		t.Parallel()
		portstest.RunObjects(t, portstest.ChaosPods, fixture(portstest.ChaosPods))
	})
	// As the chaospod controller reads its Pods: narrowed by a label.
	t.Run("PodsSelected", func(t *testing.T) {
		t.Parallel()
		sel, err := labels.Parse("app")
		require.NoError(t, err)
		portstest.RunObjects(t, portstest.Pods, func(*testing.T) portstest.Fixture[*corev1.Pod, *corev1.Pod] {
			s := memory.NewStore[*corev1.Pod](portstest.Pods.GroupKind)
			return portstest.Fixture[*corev1.Pod, *corev1.Pod]{
				Namespace: "contract", Reader: s.Selected(sel), Writer: s, Other: s, Get: s.Get, Selector: sel,
			}
		})
	})
}

var webKey = types.NamespacedName{Namespace: "apps", Name: "web"}

func TestStoreFailNextWrites(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := memory.NewStore[*appsv1.ReplicaSet](portstest.ReplicaSets.GroupKind)
	_, err := s.Create(ctx, portstest.NewReplicaSet(webKey))
	require.NoError(t, err)

	s.FailNextWrites(ports.ErrInvalid, ports.ErrConflict)
	patch := ports.MetadataPatch{Labels: map[string]string{"hello": "world"}}
	assert.ErrorIs(t, s.PatchMetadata(ctx, webKey, patch), ports.ErrInvalid)
	assert.ErrorIs(t, s.PatchMetadata(ctx, webKey, patch), ports.ErrConflict)
	require.NoError(t, s.PatchMetadata(ctx, webKey, patch), "only the next two writes fail")

	got, err := s.Get(ctx, webKey)
	require.NoError(t, err)
	assert.Equal(t, "world", got.Labels["hello"])
}

func TestStoreStampsCreationFromItsClock(t *testing.T) {
	t.Parallel()
	now := time.Date(2030, time.March, 4, 5, 6, 7, 800, time.UTC)
	s := memory.NewStore[*corev1.Pod](portstest.Pods.GroupKind).WithClock(memory.NewClock(now))
	out, err := s.Create(context.Background(), portstest.NewPod(webKey))
	require.NoError(t, err)
	assert.Equal(t, now.Truncate(time.Second), out.CreationTimestamp.UTC())
	assert.Equal(t, int64(1), out.Generation)
}

func TestStoreMetadataViewKeepsTheKind(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := memory.NewStore[*corev1.Pod](portstest.Pods.GroupKind)
	pod := portstest.NewPod(webKey)
	pod.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "ChaosPod", Name: "web", UID: "u", Controller: new(true)}}
	created, err := s.Create(ctx, pod)
	require.NoError(t, err)

	got, err := s.Metadata().Get(ctx, webKey)
	require.NoError(t, err)
	assert.Equal(t, "Pod", got.Kind)
	assert.Equal(t, created.UID, got.UID)
	assert.Equal(t, pod.OwnerReferences, got.OwnerReferences)
	assert.Equal(t, created.CreationTimestamp, got.CreationTimestamp)
}

func TestStoreUpdateBumpsGenerationOnSpecChangesOnly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := memory.NewStore[*chaosv1.ChaosPod](chaosv1.GroupKind)
	cp, err := s.Create(ctx, portstest.NewChaosPod(webKey))
	require.NoError(t, err)

	cp.Labels["more"] = "yes"
	cp, err = s.Update(ctx, cp)
	require.NoError(t, err)
	assert.Equal(t, int64(1), cp.Generation, "a metadata change")

	portstest.ChaosPods.ChangeSpec(cp)
	cp, err = s.Update(ctx, cp)
	require.NoError(t, err)
	assert.Equal(t, int64(2), cp.Generation, "a spec change")

	same, err := s.Update(ctx, cp)
	require.NoError(t, err)
	assert.Equal(t, cp.ResourceVersion, same.ResourceVersion, "nothing changed, nothing written")
}
