package memory_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/hexagonal-operator/operator/internal/adapters/memory"
	"github.com/hexagonal-operator/operator/internal/ports"
	"github.com/hexagonal-operator/operator/test/portstest"
)

var podKind = schema.GroupKind{Kind: "Pod"}

// recorder writes down what a handler was told, one line per event.
type recorder struct {
	mu  sync.Mutex
	log []string
}

func (r *recorder) OnAdd(obj metav1.Object) {
	r.add("add %s/%s %s", obj.GetNamespace(), obj.GetName(), labels(obj))
}
func (r *recorder) OnUpdate(o, n metav1.Object) {
	r.add("update %s/%s hello=%s -> %s", n.GetNamespace(), n.GetName(), o.GetLabels()["hello"], n.GetLabels()["hello"])
}
func (r *recorder) OnDelete(obj metav1.Object) {
	r.add("delete %s/%s %s", obj.GetNamespace(), obj.GetName(), labels(obj))
}

func (r *recorder) add(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.log = append(r.log, fmt.Sprintf(format, args...))
}

func (r *recorder) events() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.log)
}

func labels(obj metav1.Object) string {
	var kv []string
	for _, k := range slices.Sorted(maps.Keys(obj.GetLabels())) {
		kv = append(kv, k+"="+obj.GetLabels()[k])
	}
	return strings.Join(kv, ",")
}

func object(ns, name string) metav1.Object {
	return &metav1.ObjectMeta{Namespace: ns, Name: name}
}

func TestSourceReplaysKnownObjectsToNewHandlers(t *testing.T) {
	t.Parallel()
	s := memory.NewSource(podKind)
	s.Add(object("b", "two"))
	s.Add(object("a", "one"))
	s.Add(object("a", "gone"))
	s.Delete(object("a", "gone"))

	rec := &recorder{}
	require.NoError(t, s.AddEventHandler(rec))

	assert.Equal(t, []string{"add a/one ", "add b/two "}, rec.events())
	assert.Equal(t, podKind, s.GroupKind())
}

func TestSourceDeliversToEveryHandler(t *testing.T) {
	t.Parallel()
	s := memory.NewSource(podKind)
	first, second := &recorder{}, &recorder{}
	require.NoError(t, s.AddEventHandler(first))
	require.NoError(t, s.AddEventHandler(second))

	old := &metav1.ObjectMeta{Namespace: "a", Name: "one", Labels: map[string]string{"hello": "moon"}}
	s.Add(old)
	s.Update(old, &metav1.ObjectMeta{Namespace: "a", Name: "one", Labels: map[string]string{"hello": "world"}})
	s.Delete(old)

	want := []string{"add a/one hello=moon", "update a/one hello=moon -> world", "delete a/one hello=moon"}
	assert.Equal(t, want, first.events())
	assert.Equal(t, want, second.events())
}

func TestSourceRejectsNilHandler(t *testing.T) {
	t.Parallel()
	assert.Error(t, memory.NewSource(podKind).AddEventHandler(nil))
}

// A handler may read the store it is notified about (it must not write).
func TestStoreCanBeReadFromAHandler(t *testing.T) {
	t.Parallel()
	s := memory.NewStore[*appsv1.ReplicaSet](portstest.ReplicaSets.GroupKind)
	seen := make(chan string, 1)
	require.NoError(t, s.Source().AddEventHandler(readingHandler{store: s, seen: seen}))

	_, err := s.Create(t.Context(), portstest.NewReplicaSet(webKey))
	require.NoError(t, err)

	assert.Equal(t, "web", <-seen)
}

type readingHandler struct {
	store *memory.Store[*appsv1.ReplicaSet]
	seen  chan<- string
}

func (h readingHandler) OnAdd(obj metav1.Object) {
	rs, err := h.store.Get(context.Background(), types.NamespacedName{Namespace: obj.GetNamespace(), Name: obj.GetName()})
	if err == nil {
		h.seen <- rs.Labels["app"]
	}
}
func (readingHandler) OnUpdate(_, _ metav1.Object) {}
func (readingHandler) OnDelete(metav1.Object)      {}

// Concurrent writers see their changes delivered once each, in the order
// the store applied them.
func TestStoreDeliversConcurrentWritesInOrder(t *testing.T) {
	t.Parallel()
	s := memory.NewStore[*appsv1.ReplicaSet](portstest.ReplicaSets.GroupKind)
	rec := &versions{}
	require.NoError(t, s.Source().AddEventHandler(rec))
	_, err := s.Create(t.Context(), portstest.NewReplicaSet(webKey))
	require.NoError(t, err)

	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			assert.NoError(t, s.PatchMetadata(t.Context(), webKey, ports.MetadataPatch{Labels: map[string]string{fmt.Sprint("l", i): "x"}}))
		})
	}
	wg.Wait()

	got := rec.get()
	require.Len(t, got, 21)
	assert.True(t, slices.IsSorted(got), "resourceVersions delivered in order: %v", got)
}

type versions struct {
	mu sync.Mutex
	rv []int
}

func (v *versions) OnAdd(obj metav1.Object)       { v.record(obj) }
func (v *versions) OnUpdate(_, obj metav1.Object) { v.record(obj) }
func (v *versions) OnDelete(metav1.Object)        {}
func (v *versions) record(obj metav1.Object) {
	v.mu.Lock()
	defer v.mu.Unlock()
	var n int
	_, _ = fmt.Sscan(obj.GetResourceVersion(), &n)
	v.rv = append(v.rv, n)
}
func (v *versions) get() []int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return slices.Clone(v.rv)
}
