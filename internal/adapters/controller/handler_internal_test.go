package controller

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/hexagonal-operator/operator/internal/adapters/controller/predicate"
	"github.com/hexagonal-operator/operator/internal/ports"
)

// mapped is an event handler whose map function writes down the objects
// it is given, and the queue it fills.
type mapped struct {
	objs  []metav1.Object
	queue workqueue.TypedInterface[ports.Request]
}

func newMapped(t *testing.T) (*mapped, *eventHandler) {
	m := &mapped{queue: workqueue.NewTyped[ports.Request]()}
	t.Cleanup(m.queue.ShutDown)
	return m, &eventHandler{
		mapFn:     func(obj metav1.Object) []ports.Request { m.objs = append(m.objs, obj); return EnqueueObject(obj) },
		predicate: predicate.And(),
		queue:     m.queue,
	}
}

func TestEventHandlerUnwrapsTombstones(t *testing.T) {
	t.Parallel()
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "web"}}
	pod := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "web-1"}}
	tests := []struct {
		name string
		obj  any
		want metav1.Object // nil: nothing delivered
	}{
		{"object", rs, rs},
		{"tombstone of a typed object", toolscache.DeletedFinalStateUnknown{Key: "apps/web", Obj: rs}, rs},
		{"tombstone of metadata", toolscache.DeletedFinalStateUnknown{Key: "apps/web-1", Obj: pod}, pod},
		{"tombstone of something else", toolscache.DeletedFinalStateUnknown{Key: "apps/x", Obj: "not an object"}, nil},
		{"not an object", 42, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m, h := newMapped(t)
			h.OnDelete(tt.obj)
			if tt.want == nil {
				assert.Empty(t, m.objs)
				assert.Zero(t, m.queue.Len())
				return
			}
			require.Len(t, m.objs, 1)
			assert.Same(t, tt.want, m.objs[0])
			require.Equal(t, 1, m.queue.Len())
			got, _ := m.queue.Get()
			assert.Equal(t, EnqueueObject(tt.want)[0], got)
		})
	}
}

func TestEventHandlerPassesObjects(t *testing.T) {
	t.Parallel()
	old := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "old"}}
	cur := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "new"}}
	m, h := newMapped(t)

	h.OnAdd(cur, true)
	h.OnAdd("not an object", false)
	h.OnUpdate(old, cur)
	h.OnUpdate(old, "not an object")
	h.OnUpdate("not an object", cur)

	assert.Equal(t, []metav1.Object{cur, old, cur}, m.objs, "the add, then both objects of the update")
	assert.Equal(t, 2, m.queue.Len(), "apps/new once, apps/old")
}
