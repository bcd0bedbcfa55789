package memory_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/hexagonal-operator/operator/internal/adapters/memory"
	"github.com/hexagonal-operator/operator/internal/ports"
)

var settingsKey = types.NamespacedName{Namespace: "shop", Name: "settings"}

func newConfigMap(key types.NamespacedName, annotations, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name, Annotations: annotations},
		Data:       data,
	}
}

func TestObjectStoreCreate(t *testing.T) {
	t.Parallel()
	s := memory.NewObjectStore[*corev1.ConfigMap]()
	in := newConfigMap(settingsKey, nil, map[string]string{"a": "1"})

	got, err := s.Create(in)
	require.NoError(t, err)

	assert.NotEmpty(t, got.ResourceVersion)
	assert.NotEmpty(t, got.UID)
	assert.False(t, got.CreationTimestamp.IsZero())
	assert.Empty(t, in.ResourceVersion, "the caller's object is not touched")
	stored, err := s.GetObject(context.Background(), settingsKey)
	require.NoError(t, err)
	assert.Equal(t, got, stored)

	_, err = s.Create(in)
	assert.ErrorIs(t, err, ports.ErrAlreadyExists)
	_, err = s.Create(newConfigMap(types.NamespacedName{Namespace: "shop"}, nil, nil))
	assert.ErrorIs(t, err, ports.ErrInvalid)
	_, err = s.Create(nil)
	assert.ErrorIs(t, err, ports.ErrInvalid)
}

func TestObjectStoreSetAnnotations(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		existing    map[string]string
		set         map[string]string
		key         types.NamespacedName
		want        map[string]string
		wantErr     error
		wantWritten bool
	}{
		{name: "merged with the others", existing: map[string]string{"team": "payments"}, set: map[string]string{"hash": "1"}, want: map[string]string{"team": "payments", "hash": "1"}, wantWritten: true},
		{name: "onto none", set: map[string]string{"hash": "1"}, want: map[string]string{"hash": "1"}, wantWritten: true},
		{name: "value replaced", existing: map[string]string{"hash": "1"}, set: map[string]string{"hash": "2"}, want: map[string]string{"hash": "2"}, wantWritten: true},
		{name: "same value writes nothing", existing: map[string]string{"hash": "1", "team": "payments"}, set: map[string]string{"hash": "1"}, want: map[string]string{"hash": "1", "team": "payments"}},
		{name: "empty map writes nothing", existing: map[string]string{"team": "payments"}, set: map[string]string{}, want: map[string]string{"team": "payments"}},
		{name: "missing", set: map[string]string{"hash": "1"}, key: types.NamespacedName{Namespace: "shop", Name: "other"}, wantErr: ports.ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := memory.NewObjectStore[*corev1.ConfigMap]()
			created, err := s.Create(newConfigMap(settingsKey, tt.existing, map[string]string{"a": "1"}))
			require.NoError(t, err)
			key := settingsKey
			if tt.key.Name != "" {
				key = tt.key
			}

			err = s.SetAnnotations(context.Background(), key, tt.set)

			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				assert.Contains(t, err.Error(), "patch configmap shop/other")
				return
			}
			require.NoError(t, err)
			got, err := s.Get(settingsKey)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got.Annotations)
			assert.Equal(t, map[string]string{"a": "1"}, got.Data, "the rest of the object stays")
			assert.Equal(t, tt.wantWritten, got.ResourceVersion != created.ResourceVersion)
		})
	}
}

func TestObjectStoreFailSetAnnotations(t *testing.T) {
	t.Parallel()
	s := memory.NewObjectStore[*corev1.ConfigMap]()
	_, err := s.Create(newConfigMap(settingsKey, nil, nil))
	require.NoError(t, err)
	ctx := context.Background()

	s.FailSetAnnotations(ports.ErrForbidden)
	assert.ErrorIs(t, s.SetAnnotations(ctx, settingsKey, map[string]string{"hash": "1"}), ports.ErrForbidden)
	s.FailSetAnnotations(nil)
	require.NoError(t, s.SetAnnotations(ctx, settingsKey, map[string]string{"hash": "1"}))

	got, err := s.Get(settingsKey)
	require.NoError(t, err)
	assert.Equal(t, "1", got.Annotations["hash"])
}

func TestObjectStoreUpdate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name           string
		change         func(cm *corev1.ConfigMap)
		wantErr        error
		wantNewVersion bool
	}{
		{name: "data change", change: func(cm *corev1.ConfigMap) { cm.Data["a"] = "2" }, wantNewVersion: true},
		{name: "no change writes nothing", change: func(*corev1.ConfigMap) {}},
		{name: "unconditional without resourceVersion", change: func(cm *corev1.ConfigMap) { cm.ResourceVersion = ""; cm.Data["a"] = "2" }, wantNewVersion: true},
		{name: "stale resourceVersion conflicts", change: func(cm *corev1.ConfigMap) { cm.ResourceVersion = "999" }, wantErr: ports.ErrConflict},
		{name: "missing", change: func(cm *corev1.ConfigMap) { cm.Name = "other" }, wantErr: ports.ErrNotFound},
		{name: "server fields kept", change: func(cm *corev1.ConfigMap) { cm.UID = "forged"; cm.Data["a"] = "2" }, wantNewVersion: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := memory.NewObjectStore[*corev1.ConfigMap]()
			created, err := s.Create(newConfigMap(settingsKey, nil, map[string]string{"a": "1"}))
			require.NoError(t, err)
			cm := created.DeepCopy()
			tt.change(cm)

			_, err = s.Update(cm)

			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			stored, err := s.Get(settingsKey)
			require.NoError(t, err)
			assert.Equal(t, tt.wantNewVersion, stored.ResourceVersion != created.ResourceVersion)
			assert.Equal(t, created.UID, stored.UID)
			assert.Equal(t, cm.Data, stored.Data)
		})
	}
}

func TestObjectStoreResourceVersionsIncrease(t *testing.T) {
	t.Parallel()
	s := memory.NewObjectStore[*corev1.ConfigMap]()
	a, err := s.Create(newConfigMap(settingsKey, nil, nil))
	require.NoError(t, err)
	require.NoError(t, s.SetAnnotations(context.Background(), settingsKey, map[string]string{"hash": "1"}))
	b, err := s.Get(settingsKey)
	require.NoError(t, err)

	av, _ := strconv.Atoi(a.ResourceVersion)
	bv, _ := strconv.Atoi(b.ResourceVersion)
	assert.Greater(t, bv, av)
}

func TestObjectStoreHandsOutCopies(t *testing.T) {
	t.Parallel()
	s := memory.NewObjectStore[*corev1.ConfigMap]()
	_, err := s.Create(newConfigMap(settingsKey, map[string]string{"team": "payments"}, nil))
	require.NoError(t, err)

	got, err := s.GetObject(context.Background(), settingsKey)
	require.NoError(t, err)
	got.Annotations["team"] = "mutated"
	listed := s.List()
	require.Len(t, listed, 1)
	listed[0].Annotations["team"] = "mutated"

	again, err := s.Get(settingsKey)
	require.NoError(t, err)
	assert.Equal(t, "payments", again.Annotations["team"])
}

func TestObjectStoreDeleteAndList(t *testing.T) {
	t.Parallel()
	s := memory.NewObjectStore[*corev1.ConfigMap]()
	for _, k := range []types.NamespacedName{{Namespace: "b", Name: "two"}, {Namespace: "a", Name: "one"}, settingsKey} {
		_, err := s.Create(newConfigMap(k, nil, nil))
		require.NoError(t, err)
	}

	require.NoError(t, s.Delete(settingsKey))

	_, err := s.Get(settingsKey)
	assert.ErrorIs(t, err, ports.ErrNotFound)
	assert.ErrorIs(t, s.Delete(settingsKey), ports.ErrNotFound)
	var names []string
	for _, cm := range s.List() {
		names = append(names, cm.Namespace+"/"+cm.Name)
	}
	assert.Equal(t, []string{"a/one", "b/two"}, names)
}

func TestObjectStoreNotifiesItsSource(t *testing.T) {
	t.Parallel()
	s := memory.NewObjectStore[*corev1.ConfigMap]()
	log := &annotationLog{}
	require.NoError(t, s.Source().AddEventHandler(log))
	ctx := context.Background()

	_, err := s.Create(newConfigMap(settingsKey, nil, nil))
	require.NoError(t, err)
	require.NoError(t, s.SetAnnotations(ctx, settingsKey, map[string]string{"hash": "1"}))
	require.NoError(t, s.SetAnnotations(ctx, settingsKey, map[string]string{"hash": "1"}), "no-op")
	require.NoError(t, s.Delete(settingsKey))

	assert.Equal(t, []string{
		"add shop/settings hash=",
		"update shop/settings hash= -> 1",
		"delete shop/settings hash=1",
	}, log.lines())
	assert.Equal(t, "ConfigMap", s.Source().Kind())
}

// annotationLog writes down what a handler was told about the "hash"
// annotation, one line per event.
type annotationLog struct {
	mu  sync.Mutex
	log []string
}

func (a *annotationLog) OnAdd(o metav1.Object) {
	a.add(fmt.Sprintf("add %s/%s hash=%s", o.GetNamespace(), o.GetName(), o.GetAnnotations()["hash"]))
}

func (a *annotationLog) OnUpdate(o, n metav1.Object) {
	a.add(fmt.Sprintf("update %s/%s hash=%s -> %s", n.GetNamespace(), n.GetName(), o.GetAnnotations()["hash"], n.GetAnnotations()["hash"]))
}

func (a *annotationLog) OnDelete(o metav1.Object) {
	a.add(fmt.Sprintf("delete %s/%s hash=%s", o.GetNamespace(), o.GetName(), o.GetAnnotations()["hash"]))
}

func (a *annotationLog) add(line string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.log = append(a.log, line)
}

func (a *annotationLog) lines() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.log)
}

// Cluster-scoped kinds have keys without a namespace.
func TestObjectStoreClusterScoped(t *testing.T) {
	t.Parallel()
	s := memory.NewObjectStore[*rbacv1.ClusterRole]()
	key := types.NamespacedName{Name: "reader"}
	_, err := s.Create(&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "reader"}})
	require.NoError(t, err)

	require.NoError(t, s.SetAnnotations(context.Background(), key, map[string]string{"hash": "1"}))

	got, err := s.GetObject(context.Background(), key)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"hash": "1"}, got.Annotations)
	assert.Equal(t, "ClusterRole", s.Source().Kind())
}

func TestObjectStoreHonoursContext(t *testing.T) {
	t.Parallel()
	s := memory.NewObjectStore[*corev1.ConfigMap]()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()

	_, err := s.GetObject(ctx, settingsKey)
	assert.ErrorIs(t, err, context.Canceled)
	assert.ErrorIs(t, s.SetAnnotations(ctx, settingsKey, map[string]string{"a": "b"}), context.Canceled)
}
