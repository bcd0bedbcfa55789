package replicaset_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/hexagonal-operator/operator/internal/adapters/memory"
	"github.com/hexagonal-operator/operator/internal/domain/replicaset"
	"github.com/hexagonal-operator/operator/internal/ports"
)

var key = types.NamespacedName{Namespace: "shop", Name: "web"}

func rs(labels map[string]string) *appsv1.ReplicaSet {
	return &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name, Labels: labels}}
}

func TestReconcile(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		existing   *appsv1.ReplicaSet
		failWrite  error
		wantLabels map[string]string
		wantEvents []string
		wantErr    func(error) bool
		wantWrite  bool
	}{
		{
			name:       "missing label is set and other labels kept",
			existing:   rs(map[string]string{"app": "web"}),
			wantLabels: map[string]string{"app": "web", "hello": "world"},
			wantEvents: []string{replicaset.ReasonLabeled},
			wantWrite:  true,
		},
		{
			name:       "no labels at all",
			existing:   rs(nil),
			wantLabels: map[string]string{"hello": "world"},
			wantEvents: []string{replicaset.ReasonLabeled},
			wantWrite:  true,
		},
		{
			name:       "wrong value is corrected",
			existing:   rs(map[string]string{"hello": "mars"}),
			wantLabels: map[string]string{"hello": "world"},
			wantEvents: []string{replicaset.ReasonLabeled},
			wantWrite:  true,
		},
		{
			name:       "already labeled writes nothing",
			existing:   rs(map[string]string{"hello": "world", "app": "web"}),
			wantLabels: map[string]string{"hello": "world", "app": "web"},
		},
		{
			name: "gone is done",
		},
		{
			name:      "deleted between read and write is done",
			existing:  rs(nil),
			failWrite: ports.ErrNotFound,
		},
		{
			name:      "invalid write is terminal",
			existing:  rs(nil),
			failWrite: ports.ErrInvalid,
			wantErr:   ports.IsTerminal,
		},
		{
			name:      "conflict is retried",
			existing:  rs(nil),
			failWrite: ports.ErrConflict,
			wantErr:   func(err error) bool { return errors.Is(err, ports.ErrConflict) && !ports.IsTerminal(err) },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			store := memory.NewStore[*appsv1.ReplicaSet](replicaSetKind)
			events := memory.NewEventRecorder()
			var before string
			if tt.existing != nil {
				created, err := store.Create(context.Background(), tt.existing)
				require.NoError(t, err)
				before = created.ResourceVersion
			}
			if tt.failWrite != nil {
				store.FailNextWrites(tt.failWrite)
			}
			r, err := replicaset.New(store.Metadata(), store, events)
			require.NoError(t, err)

			res, err := r.Reconcile(context.Background(), ports.Request{NamespacedName: key})
			assert.Zero(t, res)
			if tt.wantErr != nil {
				require.Error(t, err)
				assert.True(t, tt.wantErr(err), "unexpected error %v", err)
				assert.Contains(t, err.Error(), "shop/web")
			} else {
				require.NoError(t, err)
			}
			assert.ElementsMatch(t, tt.wantEvents, events.Reasons())
			if tt.existing == nil || tt.failWrite != nil {
				return
			}
			got, err := store.Get(context.Background(), key)
			require.NoError(t, err)
			assert.Equal(t, tt.wantLabels, got.Labels)
			assert.Equal(t, tt.wantWrite, got.ResourceVersion != before, "written only when needed")
		})
	}
}

func TestReconcileDoesNotMutateTheCachedObject(t *testing.T) {
	t.Parallel()
	cached := &metav1.PartialObjectMetadata{ObjectMeta: rs(map[string]string{"app": "web"}).ObjectMeta}
	reader := staticReader{cached}
	r, err := replicaset.New(reader, memory.NewStore[*appsv1.ReplicaSet](replicaSetKind), memory.NewEventRecorder())
	require.NoError(t, err)
	_, _ = r.Reconcile(context.Background(), ports.Request{NamespacedName: key})
	assert.Equal(t, map[string]string{"app": "web"}, cached.Labels)
}

func TestNewRequiresEveryPort(t *testing.T) {
	t.Parallel()
	_, err := replicaset.New(nil, memory.NewStore[*appsv1.ReplicaSet](replicaSetKind), memory.NewEventRecorder())
	assert.Error(t, err)
}

type staticReader struct{ rs *metav1.PartialObjectMetadata }

func (s staticReader) Get(context.Context, types.NamespacedName) (*metav1.PartialObjectMetadata, error) {
	return s.rs, nil
}

func (s staticReader) List(context.Context, string, ...ports.ListOption) ([]*metav1.PartialObjectMetadata, error) {
	return []*metav1.PartialObjectMetadata{s.rs}, nil
}

var replicaSetKind = appsv1.SchemeGroupVersion.WithKind("ReplicaSet").GroupKind()
