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
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	chaosv1 "github.com/hexagonal-operator/operator/api/chaos/v1"
	"github.com/hexagonal-operator/operator/internal/ports"
	"github.com/hexagonal-operator/operator/internal/writes"
)

// Timings of the suite: generous, because a loaded CI machine runs several
// API servers at once; Eventually returns as soon as the condition holds.
const (
	waitFor = 30 * time.Second
	tick    = 20 * time.Millisecond
)

// Fixture is one implementation of ports.Reader and ports.Writer for a
// kind, and a back door into the same store. Its values must be safe for
// concurrent use: the suite's tests run in parallel.
type Fixture[T, R metav1.Object] struct {
	// Namespace is where the suite creates objects; it exists. Fixtures may
	// share it: every test uses its own names.
	Namespace string
	// Reader and Writer are under test. The reader may lag behind the
	// store (a cache) and may serve another type of the same kind (R is
	// *metav1.PartialObjectMetadata for a kind cached metadata-only).
	Reader ports.Reader[R]
	Writer ports.Writer[T]
	// Other writes as another client would (another controller, a user
	// with kubectl), on the same store.
	Other ports.Writer[T]
	// Get reads the store's authoritative state, bypassing any cache.
	Get func(ctx context.Context, key types.NamespacedName) (T, error)
	// Selector, when set, is the label selector the reader is narrowed
	// by: it must match the labels Kind.New gives (and the suite's
	// additions to them) and not an object without labels, which the
	// reader must then never see.
	Selector labels.Selector
}

// Kind says how the suite makes and changes objects of the kind under test.
type Kind[T metav1.Object] struct {
	GroupKind schema.GroupKind
	// New returns a valid object named key, with the label app=web and the
	// annotation note=kept.
	New func(key types.NamespacedName) T
	// ChangeSpec makes a valid change to obj's spec (or data).
	ChangeSpec func(obj T)
	// Spec returns what ChangeSpec changes, for comparison.
	Spec func(obj T) any
	// ChangeStatus makes a valid change to obj's status and Status returns
	// it; both nil when the kind has no status subresource.
	ChangeStatus func(obj T)
	Status       func(obj T) any
}

// RunObjects checks the behaviour that the domain relies on from
// ports.Reader and ports.Writer. newFixture is called once per test.
func RunObjects[T, R metav1.Object](t *testing.T, kind Kind[T], newFixture func(t *testing.T) Fixture[T, R]) {
	t.Helper()
	tests := []struct {
		name string
		run  func(t *testing.T, s suite[T, R])
	}{
		{"GetMissingIsNotFound", getMissing[T, R]},
		{"ListNarrowsByNamespaceAndLabels", listNarrows[T, R]},
		{"CreateThenTheReaderSeesIt", createThenRead[T, R]},
		{"CreateExistingIsAlreadyExists", createExisting[T, R]},
		{"DeleteThenTheReaderForgetsIt", deleteThenForget[T, R]},
		{"DeleteAnotherIncarnationConflicts", deleteOtherUID[T, R]},
		{"DeleteMissingIsNotFound", deleteMissing[T, R]},
		{"PatchMergesAndKeepsWhatTheReaderHasNotSeen", patchMerges[T, R]},
		{"PatchOfPresentValuesWritesNothing", patchPresent[T, R]},
		{"PatchMissingIsNotFound", patchMissing[T, R]},
		{"ConcurrentPatchersAllSurvive", concurrentPatchers[T, R]},
		{"UpdateOfAStaleObjectConflicts", updateStale[T, R]},
		{"UpdateAndUpdateStatusEachWriteTheirPart", updateParts[T, R]},
		{"EveryWriteIsObserved", writesObserved[T, R]},
		{"ASelectedReaderSeesOnlyWhatItSelects", selectedOnly[T, R]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.run(t, suite[T, R]{Fixture: newFixture(t), kind: kind})
		})
	}
}

type suite[T, R metav1.Object] struct {
	Fixture[T, R]
	kind Kind[T]
}

func getMissing[T, R metav1.Object](t *testing.T, s suite[T, R]) {
	_, err := s.Reader.Get(t.Context(), s.key("missing"))
	require.ErrorIs(t, err, ports.ErrNotFound)
	assertOnlyPortError(t, err, ports.ErrNotFound)
}

func listNarrows[T, R metav1.Object](t *testing.T, s suite[T, R]) {
	// The test's own label value: other tests' objects may share the
	// namespace or the store.
	mine := map[string]string{"listed": s.Namespace}
	for name, tier := range map[string]string{"list-a": "back", "list-b": "front"} {
		obj := s.kind.New(s.key(name))
		obj.SetLabels(map[string]string{"app": "web", "listed": s.Namespace, "tier": tier})
		_, err := s.Other.Create(t.Context(), obj)
		require.NoError(t, err)
	}
	names := func(c assert.TestingT, namespace string, opts ...ports.ListOption) []string {
		objs, err := s.Reader.List(t.Context(), namespace, opts...)
		assert.NoError(c, err)
		var out []string
		for _, o := range objs {
			out = append(out, o.GetName())
		}
		return out
	}
	a, b := s.key("list-a").Name, s.key("list-b").Name
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.ElementsMatch(c, []string{a, b}, names(c, s.Namespace, ports.MatchingLabels(mine)), "the namespace's, by label")
		assert.ElementsMatch(c, []string{a, b}, names(c, "", ports.MatchingLabels(mine)), "every namespace's, by label")
		assert.Subset(c, names(c, s.Namespace), []string{a, b}, "no options: the whole namespace")
	}, waitFor, tick, "the reader lists what was created")
	assert.Equal(t, []string{b}, names(t, s.Namespace, ports.MatchingLabels(map[string]string{"listed": s.Namespace, "tier": "front"})), "every label must match")
	front, err := labels.Parse("listed=" + s.Namespace + ",tier in (front)")
	require.NoError(t, err)
	assert.Equal(t, []string{b}, names(t, s.Namespace, ports.MatchingSelector(front)), "a selector")
	assert.Empty(t, names(t, s.Namespace+"-elsewhere", ports.MatchingLabels(mine)), "another namespace's")
	assert.Empty(t, names(t, s.Namespace, ports.MatchingLabels(map[string]string{"listed": "nobody"})), "no match is an empty list")
}

func createThenRead[T, R metav1.Object](t *testing.T, s suite[T, R]) {
	key := s.key("created")
	out, err := s.Writer.Create(t.Context(), s.kind.New(key))
	require.NoError(t, err)
	assert.NotEmpty(t, out.GetUID())
	assert.NotEmpty(t, out.GetResourceVersion())
	assert.False(t, out.GetCreationTimestamp().Time.IsZero())

	got := s.waitSeen(t, key)
	assert.Equal(t, key, types.NamespacedName{Namespace: got.GetNamespace(), Name: got.GetName()})
	assert.Equal(t, map[string]string{"app": "web"}, got.GetLabels())
	assert.Equal(t, map[string]string{"note": "kept"}, got.GetAnnotations())
	assert.Equal(t, out.GetUID(), got.GetUID())
	if m, ok := any(got).(*metav1.PartialObjectMetadata); ok {
		// Events about a metadata-only object are recorded against its kind.
		assert.Equal(t, s.kind.GroupKind, m.GroupVersionKind().GroupKind(), "a metadata-only object names its kind")
	}
}

func createExisting[T, R metav1.Object](t *testing.T, s suite[T, R]) {
	key := s.key("twice")
	s.create(t, key)
	_, err := s.Writer.Create(t.Context(), s.kind.New(key))
	require.ErrorIs(t, err, ports.ErrAlreadyExists)
	assertOnlyPortError(t, err, ports.ErrAlreadyExists)
}

func deleteThenForget[T, R metav1.Object](t *testing.T, s suite[T, R]) {
	key := s.key("deleted")
	created := s.create(t, key)
	s.waitSeen(t, key)

	require.NoError(t, s.Writer.Delete(t.Context(), key, created.GetUID()))
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		_, err := s.Reader.Get(t.Context(), key)
		assert.ErrorIs(c, err, ports.ErrNotFound)
	}, waitFor, tick, "the reader forgets the deleted object")
}

func deleteOtherUID[T, R metav1.Object](t *testing.T, s suite[T, R]) {
	key := s.key("incarnation")
	s.create(t, key)
	err := s.Writer.Delete(t.Context(), key, types.UID("a0000000-0000-4000-8000-000000000000"))
	require.ErrorIs(t, err, ports.ErrConflict)
	assertOnlyPortError(t, err, ports.ErrConflict)
	_, err = s.Get(t.Context(), key)
	require.NoError(t, err, "the object is still there")
}

func deleteMissing[T, R metav1.Object](t *testing.T, s suite[T, R]) {
	err := s.Writer.Delete(t.Context(), s.key("never"), "")
	require.ErrorIs(t, err, ports.ErrNotFound)
	assertOnlyPortError(t, err, ports.ErrNotFound)
}

// patchMerges is the race the patch exists for: someone labels the object
// after the reader's last view of it, and the patch must keep that label.
func patchMerges[T, R metav1.Object](t *testing.T, s suite[T, R]) {
	key := s.key("patched")
	s.create(t, key)
	s.waitSeen(t, key)
	before := s.get(t, key)
	require.NoError(t, s.Other.PatchMetadata(t.Context(), key, ports.MetadataPatch{Labels: map[string]string{"foreign": "yes"}}))

	require.NoError(t, s.Writer.PatchMetadata(t.Context(), key, ports.MetadataPatch{
		Labels:      map[string]string{"hello": "world", "app": "shop"},
		Annotations: map[string]string{"example": "foo"},
	}))

	got := s.get(t, key)
	assert.Equal(t, map[string]string{"app": "shop", "hello": "world", "foreign": "yes"}, got.GetLabels())
	assert.Equal(t, map[string]string{"note": "kept", "example": "foo"}, got.GetAnnotations())
	assert.True(t, equality.Semantic.DeepEqual(s.kind.Spec(before), s.kind.Spec(got)), "the spec is untouched")
}

func patchPresent[T, R metav1.Object](t *testing.T, s suite[T, R]) {
	key := s.key("present")
	s.create(t, key)
	before := s.get(t, key).GetResourceVersion()

	require.NoError(t, s.Writer.PatchMetadata(t.Context(), key, ports.MetadataPatch{Labels: map[string]string{"app": "web"}}))
	require.NoError(t, s.Writer.PatchMetadata(t.Context(), key, ports.MetadataPatch{}))

	assert.Equal(t, before, s.get(t, key).GetResourceVersion(), "nothing was written")
}

func patchMissing[T, R metav1.Object](t *testing.T, s suite[T, R]) {
	err := s.Writer.PatchMetadata(t.Context(), s.key("nowhere"), ports.MetadataPatch{Labels: map[string]string{"a": "b"}})
	require.ErrorIs(t, err, ports.ErrNotFound)
	assertOnlyPortError(t, err, ports.ErrNotFound)
}

func concurrentPatchers[T, R metav1.Object](t *testing.T, s suite[T, R]) {
	key := s.key("crowded")
	s.create(t, key)
	const writers = 8
	var wg sync.WaitGroup
	errs := make([]error, writers)
	for i := range writers {
		wg.Go(func() {
			w := s.Writer
			if i%2 == 1 {
				w = s.Other
			}
			errs[i] = w.PatchMetadata(t.Context(), key, ports.MetadataPatch{Labels: map[string]string{fmt.Sprintf("w%d", i): "x"}})
		})
	}
	wg.Wait()
	want := map[string]string{"app": "web"}
	for i := range writers {
		require.NoError(t, errs[i])
		want[fmt.Sprintf("w%d", i)] = "x"
	}
	assert.Equal(t, want, s.get(t, key).GetLabels())
}

func updateStale[T, R metav1.Object](t *testing.T, s suite[T, R]) {
	key := s.key("stale")
	s.create(t, key)
	stale := s.get(t, key)
	require.NoError(t, s.Other.PatchMetadata(t.Context(), key, ports.MetadataPatch{Labels: map[string]string{"first": "yes"}}))

	s.kind.ChangeSpec(stale)
	_, err := s.Writer.Update(t.Context(), stale)
	require.ErrorIs(t, err, ports.ErrConflict)
	assertOnlyPortError(t, err, ports.ErrConflict)
	if s.kind.ChangeStatus != nil {
		s.kind.ChangeStatus(stale)
		_, err = s.Writer.UpdateStatus(t.Context(), stale)
		require.ErrorIs(t, err, ports.ErrConflict)
	}
}

func updateParts[T, R metav1.Object](t *testing.T, s suite[T, R]) {
	key := s.key("parts")
	s.create(t, key)
	stored := s.get(t, key)

	next := deepCopy(stored)
	s.kind.ChangeSpec(next)
	next.SetLabels(map[string]string{"app": "web", "updated": "yes"})
	if s.kind.ChangeStatus != nil {
		s.kind.ChangeStatus(next) // ignored by Update
	}
	updated, err := s.Writer.Update(t.Context(), next)
	require.NoError(t, err)
	assert.NotEqual(t, stored.GetResourceVersion(), updated.GetResourceVersion())
	got := s.get(t, key)
	assert.Equal(t, "yes", got.GetLabels()["updated"])
	assert.True(t, equality.Semantic.DeepEqual(s.kind.Spec(next), s.kind.Spec(got)), "Update wrote the spec")
	if s.kind.ChangeStatus == nil {
		return
	}
	assert.True(t, equality.Semantic.DeepEqual(s.kind.Status(stored), s.kind.Status(got)), "Update kept the stored status")

	next = deepCopy(got)
	s.kind.ChangeStatus(next)
	s.kind.ChangeSpec(next) // ignored by UpdateStatus
	_, err = s.Writer.UpdateStatus(t.Context(), next)
	require.NoError(t, err)
	after := s.get(t, key)
	assert.True(t, equality.Semantic.DeepEqual(s.kind.Status(next), s.kind.Status(after)), "UpdateStatus wrote the status")
	assert.True(t, equality.Semantic.DeepEqual(s.kind.Spec(got), s.kind.Spec(after)), "UpdateStatus kept the spec")
}

func writesObserved[T, R metav1.Object](t *testing.T, s suite[T, R]) {
	type write struct {
		kind schema.GroupKind
		rv   string
	}
	var (
		mu   sync.Mutex
		seen []write
	)
	ctx := writes.WithObserver(t.Context(), func(kind schema.GroupKind, rv string) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, write{kind, rv})
	})
	last := func() write {
		mu.Lock()
		defer mu.Unlock()
		require.NotEmpty(t, seen)
		return seen[len(seen)-1]
	}
	key := s.key("observed")

	created, err := s.Writer.Create(ctx, s.kind.New(key))
	require.NoError(t, err)
	assert.Equal(t, write{s.kind.GroupKind, created.GetResourceVersion()}, last(), "create")

	require.NoError(t, s.Writer.PatchMetadata(ctx, key, ports.MetadataPatch{Labels: map[string]string{"hello": "world"}}))
	assert.Equal(t, write{s.kind.GroupKind, s.get(t, key).GetResourceVersion()}, last(), "patch")

	next := s.get(t, key)
	s.kind.ChangeSpec(next)
	updated, err := s.Writer.Update(ctx, next)
	require.NoError(t, err)
	assert.Equal(t, write{s.kind.GroupKind, updated.GetResourceVersion()}, last(), "update")
}

// selectedOnly holds a reader narrowed by a label selector to it: an
// object the selector does not match is neither found nor listed, and an
// object whose labels stop matching leaves the reader until they match
// again, as a watch narrowed by the selector reports it deleted.
func selectedOnly[T, R metav1.Object](t *testing.T, s suite[T, R]) {
	if s.Selector == nil || s.Selector.Empty() {
		t.Skip("the reader is not narrowed by a selector")
	}
	require.False(t, s.Selector.Matches(labels.Set{}), "the suite needs a selector that an object without labels does not match")
	unlabeled := s.kind.New(s.key("unselected"))
	unlabeled.SetLabels(nil)
	_, err := s.Other.Create(t.Context(), unlabeled)
	require.NoError(t, err)
	// Created after the other, so once the reader has it, a reader that
	// ignored the selector would have had the other too.
	key := s.key("selected")
	s.create(t, key)
	s.waitSeen(t, key)

	_, err = s.Reader.Get(t.Context(), s.key("unselected"))
	require.ErrorIs(t, err, ports.ErrNotFound, "an object the selector does not match is not found")
	assertOnlyPortError(t, err, ports.ErrNotFound)
	listed, err := s.Reader.List(t.Context(), s.Namespace)
	require.NoError(t, err)
	var names []string
	for _, o := range listed {
		names = append(names, o.GetName())
	}
	assert.Contains(t, names, key.Name)
	assert.NotContains(t, names, s.key("unselected").Name, "nor listed")

	relabel := func(l map[string]string) {
		obj := s.get(t, key)
		obj.SetLabels(l)
		_, err := s.Other.Update(t.Context(), obj)
		require.NoError(t, err)
	}
	relabel(nil)
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		_, err := s.Reader.Get(t.Context(), key)
		assert.ErrorIs(c, err, ports.ErrNotFound)
	}, waitFor, tick, "an object whose labels stop matching leaves the reader")
	relabel(s.kind.New(key).GetLabels())
	s.waitSeen(t, key)
}

// deepCopy copies an API object of type T (every API type is a
// runtime.Object).
func deepCopy[T metav1.Object](obj T) T {
	return any(obj).(runtime.Object).DeepCopyObject().(T) //nolint:forcetypeassert // API types are runtime.Objects
}

func assertOnlyPortError(t *testing.T, err, want error) {
	t.Helper()
	for _, pe := range []error{ports.ErrNotFound, ports.ErrConflict, ports.ErrAlreadyExists, ports.ErrInvalid, ports.ErrForbidden} {
		assert.Equal(t, errors.Is(want, pe), errors.Is(err, pe), "errors.Is(err, %v) for %v", pe, err)
	}
}

func (s suite[T, R]) key(name string) types.NamespacedName {
	return types.NamespacedName{Namespace: s.Namespace, Name: "contract-" + name}
}

func (s suite[T, R]) create(t *testing.T, key types.NamespacedName) T {
	t.Helper()
	out, err := s.Other.Create(t.Context(), s.kind.New(key))
	require.NoError(t, err, "create %s", key)
	return out
}

func (s suite[T, R]) get(t *testing.T, key types.NamespacedName) T {
	t.Helper()
	obj, err := s.Get(t.Context(), key)
	require.NoError(t, err, "read %s from the store", key)
	return obj
}

func (s suite[T, R]) waitSeen(t *testing.T, key types.NamespacedName) R {
	t.Helper()
	var got R
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		var err error
		got, err = s.Reader.Get(t.Context(), key)
		assert.NoError(c, err)
	}, waitFor, tick, "the reader sees %s", key)
	return got
}

// The kinds the operator reads and writes, as the suite makes them.

// ReplicaSets are valid ReplicaSets of no replicas.
var ReplicaSets = Kind[*appsv1.ReplicaSet]{
	GroupKind: appsv1.SchemeGroupVersion.WithKind("ReplicaSet").GroupKind(),
	New:       NewReplicaSet,
	ChangeSpec: func(rs *appsv1.ReplicaSet) {
		rs.Spec.MinReadySeconds++
	},
	Spec: func(rs *appsv1.ReplicaSet) any { return rs.Spec },
	ChangeStatus: func(rs *appsv1.ReplicaSet) {
		rs.Status.ObservedGeneration++
	},
	Status: func(rs *appsv1.ReplicaSet) any { return rs.Status },
}

// NewReplicaSet returns a ReplicaSet of no replicas with the label app=web
// and the annotation note=kept.
func NewReplicaSet(key types.NamespacedName) *appsv1.ReplicaSet {
	match := map[string]string{"app": key.Name}
	return &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: key.Namespace, Name: key.Name,
			Labels: map[string]string{"app": "web"}, Annotations: map[string]string{"note": "kept"},
		},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: new(int32(0)),
			Selector: &metav1.LabelSelector{MatchLabels: match},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: maps.Clone(match)},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "example.invalid/app:1"}}},
			},
		},
	}
}

// Pods are Pods with one container; only their metadata is read.
var Pods = Kind[*corev1.Pod]{
	GroupKind: corev1.SchemeGroupVersion.WithKind("Pod").GroupKind(),
	New:       NewPod,
	// A Pod's spec is immutable but for a few fields; the image is one.
	ChangeSpec: func(p *corev1.Pod) {
		p.Spec.Containers[0].Image += "-next"
	},
	Spec: func(p *corev1.Pod) any { return p.Spec.Containers[0].Image },
	ChangeStatus: func(p *corev1.Pod) {
		p.Status.Message += "changed;"
	},
	Status: func(p *corev1.Pod) any { return p.Status.Message },
}

// NewPod returns a Pod with one container, the label app=web and the
// annotation note=kept.
func NewPod(key types.NamespacedName) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: key.Namespace, Name: key.Name,
			Labels: map[string]string{"app": "web"}, Annotations: map[string]string{"note": "kept"},
		},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "example.invalid/app:1"}}},
	}
}

// ChaosPods are ChaosPods with a nextStop in the future.
var ChaosPods = Kind[*chaosv1.ChaosPod]{
	GroupKind: chaosv1.GroupKind,
	New:       NewChaosPod,
	ChangeSpec: func(cp *chaosv1.ChaosPod) {
		cp.Spec.NextStop = &metav1.Time{Time: cp.Spec.NextStop.Add(time.Minute)}
	},
	Spec: func(cp *chaosv1.ChaosPod) any { return cp.Spec.NextStop.UTC().Format(time.RFC3339) },
	ChangeStatus: func(cp *chaosv1.ChaosPod) {
		t := metav1.NewTime(time.Now().Truncate(time.Second))
		if cp.Status.LastRun != nil {
			t = metav1.NewTime(cp.Status.LastRun.Add(time.Second))
		}
		cp.Status.LastRun = &t
	},
	Status: func(cp *chaosv1.ChaosPod) any {
		if cp.Status.LastRun == nil {
			return nil
		}
		return cp.Status.LastRun.UTC().Format(time.RFC3339)
	},
}

// NewChaosPod returns a ChaosPod whose Pod runs one container, stopping an
// hour from now, with the label app=web and the annotation note=kept.
func NewChaosPod(key types.NamespacedName) *chaosv1.ChaosPod {
	return &chaosv1.ChaosPod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: key.Namespace, Name: key.Name,
			Labels: map[string]string{"app": "web"}, Annotations: map[string]string{"note": "kept"},
		},
		Spec: chaosv1.ChaosPodSpec{
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				Containers: []corev1.Container{{Name: "app", Image: "example.invalid/app:1"}},
			}},
			NextStop: &metav1.Time{Time: time.Now().Add(time.Hour).Truncate(time.Second)},
		},
	}
}
