package memory_test

import (
	"context"
	"errors"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/hexagonal-operator/operator/internal/adapters/memory"
	"github.com/hexagonal-operator/operator/internal/ports"
	"github.com/hexagonal-operator/operator/internal/ports/portstest"
)

func TestReplicaSetStoreContract(t *testing.T) {
	t.Parallel()
	portstest.RunReplicaSetStore(t, func(t *testing.T) portstest.ReplicaSetFixture {
		s := memory.NewReplicaSetStore()
		return portstest.ReplicaSetFixture{
			Namespace: "contract",
			Reader:    s,
			Labeler:   s,
			Create: func(_ context.Context, rs *appsv1.ReplicaSet) error {
				_, err := s.Create(rs)
				return err
			},
			// Someone else's read-modify-write, retried on conflict as
			// client-go's retry.RetryOnConflict would.
			SetForeignLabel: func(_ context.Context, key types.NamespacedName, label, value string) error {
				for {
					rs, err := s.Get(key)
					if err != nil {
						return err
					}
					if rs.Labels == nil {
						rs.Labels = map[string]string{}
					}
					rs.Labels[label] = value
					if _, err = s.Update(rs); !errors.Is(err, ports.ErrConflict) {
						return err
					}
				}
			},
			Delete: func(_ context.Context, key types.NamespacedName) error { return s.Delete(key) },
			Get:    func(_ context.Context, key types.NamespacedName) (*appsv1.ReplicaSet, error) { return s.Get(key) },
		}
	})
}

var webKey = types.NamespacedName{Namespace: "apps", Name: "web"}

func TestReplicaSetStoreCreate(t *testing.T) {
	t.Parallel()
	s := memory.NewReplicaSetStore()
	in := portstest.NewReplicaSet(webKey, map[string]string{"app": "web"})

	got, err := s.Create(in)
	require.NoError(t, err)

	assert.NotEmpty(t, got.ResourceVersion)
	assert.NotEmpty(t, got.UID)
	assert.Equal(t, int64(1), got.Generation)
	assert.False(t, got.CreationTimestamp.IsZero())
	assert.Empty(t, in.ResourceVersion, "the caller's object is not touched")

	_, err = s.Create(in)
	assert.ErrorIs(t, err, ports.ErrAlreadyExists)
	_, err = s.Create(portstest.NewReplicaSet(types.NamespacedName{Namespace: "apps"}, nil))
	assert.ErrorIs(t, err, ports.ErrInvalid)
}

func TestReplicaSetStoreUpdate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name           string
		change         func(rs *appsv1.ReplicaSet)
		wantErr        error
		wantNewVersion bool
		wantGeneration int64
	}{
		{name: "label change", change: func(rs *appsv1.ReplicaSet) { rs.Labels["x"] = "y" }, wantNewVersion: true, wantGeneration: 1},
		{name: "spec change bumps generation", change: func(rs *appsv1.ReplicaSet) { rs.Spec.MinReadySeconds = 3 }, wantNewVersion: true, wantGeneration: 2},
		{name: "no change writes nothing", change: func(*appsv1.ReplicaSet) {}, wantGeneration: 1},
		{name: "unconditional without resourceVersion", change: func(rs *appsv1.ReplicaSet) { rs.ResourceVersion = ""; rs.Labels["x"] = "y" }, wantNewVersion: true, wantGeneration: 1},
		{name: "stale resourceVersion conflicts", change: func(rs *appsv1.ReplicaSet) { rs.ResourceVersion = "999" }, wantErr: ports.ErrConflict},
		{name: "missing", change: func(rs *appsv1.ReplicaSet) { rs.Name = "other" }, wantErr: ports.ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := memory.NewReplicaSetStore()
			created, err := s.Create(portstest.NewReplicaSet(webKey, map[string]string{"app": "web"}))
			require.NoError(t, err)
			rs := created.DeepCopy()
			tt.change(rs)

			_, err = s.Update(rs)

			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			stored, err := s.Get(webKey)
			require.NoError(t, err)
			assert.Equal(t, tt.wantNewVersion, stored.ResourceVersion != created.ResourceVersion)
			assert.Equal(t, tt.wantGeneration, stored.Generation)
			assert.Equal(t, created.UID, stored.UID)
		})
	}
}

func TestReplicaSetStoreResourceVersionsIncrease(t *testing.T) {
	t.Parallel()
	s := memory.NewReplicaSetStore()
	a, err := s.Create(portstest.NewReplicaSet(webKey, nil))
	require.NoError(t, err)
	require.NoError(t, s.SetReplicaSetLabels(context.Background(), webKey, map[string]string{"hello": "world"}))
	b, err := s.Get(webKey)
	require.NoError(t, err)

	av, _ := strconv.Atoi(a.ResourceVersion)
	bv, _ := strconv.Atoi(b.ResourceVersion)
	assert.Greater(t, bv, av)
}

func TestReplicaSetStoreHandsOutCopies(t *testing.T) {
	t.Parallel()
	s := memory.NewReplicaSetStore()
	_, err := s.Create(portstest.NewReplicaSet(webKey, map[string]string{"app": "web"}))
	require.NoError(t, err)

	got, err := s.GetReplicaSet(context.Background(), webKey)
	require.NoError(t, err)
	got.Labels["app"] = "mutated"
	listed := s.List()
	require.Len(t, listed, 1)
	listed[0].Labels["app"] = "mutated"

	again, err := s.Get(webKey)
	require.NoError(t, err)
	assert.Equal(t, "web", again.Labels["app"])
}

func TestReplicaSetStoreDelete(t *testing.T) {
	t.Parallel()
	s := memory.NewReplicaSetStore()
	_, err := s.Create(portstest.NewReplicaSet(webKey, nil))
	require.NoError(t, err)

	require.NoError(t, s.Delete(webKey))

	_, err = s.Get(webKey)
	assert.ErrorIs(t, err, ports.ErrNotFound)
	assert.ErrorIs(t, s.Delete(webKey), ports.ErrNotFound)
	assert.Empty(t, s.List())
}

func TestReplicaSetStoreNotifiesItsSource(t *testing.T) {
	t.Parallel()
	s := memory.NewReplicaSetStore()
	rec := &recorder{}
	require.NoError(t, s.Source().AddEventHandler(rec))
	ctx := context.Background()

	_, err := s.Create(portstest.NewReplicaSet(webKey, map[string]string{"app": "web"}))
	require.NoError(t, err)
	require.NoError(t, s.SetReplicaSetLabels(ctx, webKey, map[string]string{"hello": "world"}))
	require.NoError(t, s.SetReplicaSetLabels(ctx, webKey, map[string]string{"hello": "world"}), "no-op")
	require.NoError(t, s.Delete(webKey))

	assert.Equal(t, []string{
		"add apps/web app=web",
		"update apps/web hello= -> world",
		"delete apps/web app=web,hello=world",
	}, rec.events())
	assert.Equal(t, "ReplicaSet", s.Source().Kind())
}

func TestReplicaSetStoreFailSetLabels(t *testing.T) {
	t.Parallel()
	s := memory.NewReplicaSetStore()
	_, err := s.Create(portstest.NewReplicaSet(webKey, nil))
	require.NoError(t, err)
	ctx := context.Background()

	s.FailSetLabels(ports.ErrInvalid)
	assert.ErrorIs(t, s.SetReplicaSetLabels(ctx, webKey, map[string]string{"hello": "world"}), ports.ErrInvalid)
	s.FailSetLabels(nil)
	require.NoError(t, s.SetReplicaSetLabels(ctx, webKey, map[string]string{"hello": "world"}))

	got, err := s.Get(webKey)
	require.NoError(t, err)
	assert.Equal(t, "world", got.Labels["hello"])
}

func TestReplicaSetStoreHonoursContext(t *testing.T) {
	t.Parallel()
	s := memory.NewReplicaSetStore()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()

	_, err := s.GetReplicaSet(ctx, webKey)
	assert.ErrorIs(t, err, context.Canceled)
	assert.ErrorIs(t, s.SetReplicaSetLabels(ctx, webKey, map[string]string{"a": "b"}), context.Canceled)
}
