package main

import (
	"fmt"
	"reflect"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
)

// TestInternerSharesEqualMetadata: equal label maps and owner references
// of two objects become one, different ones stay apart, the transform
// composes with the one before it and leaves tombstones alone.
func TestInternerSharesEqualMetadata(t *testing.T) {
	t.Parallel()
	in := newInterner()
	strip := in.transform(stripPodMetadata())
	pod := func(name, owner string) *metav1.PartialObjectMetadata {
		return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
			Name:            name,
			Namespace:       "apps",
			Labels:          map[string]string{"app": "web"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: owner, UID: types.UID("uid-" + owner)}},
		}}
	}
	a, b, c := pod("a", "web"), pod("b", "web"), pod("c", "db")
	for _, obj := range []*metav1.PartialObjectMetadata{a, b, c} {
		_, err := strip(obj)
		require.NoError(t, err)
	}
	assert.Nil(t, a.Labels, "the transform before the interner ran")
	assert.Same(t, unsafe.SliceData(a.OwnerReferences), unsafe.SliceData(b.OwnerReferences))
	assert.NotSame(t, unsafe.SliceData(a.OwnerReferences), unsafe.SliceData(c.OwnerReferences))

	keep := in.transform(nil)
	x, y := &corev1.Pod{}, &corev1.Pod{}
	x.Labels, y.Labels = map[string]string{"app": "web", "tier": "1"}, map[string]string{"tier": "1", "app": "web"}
	_, _ = keep(x)
	_, _ = keep(y)
	assert.Equal(t, reflect.ValueOf(x.Labels).UnsafePointer(), reflect.ValueOf(y.Labels).UnsafePointer())

	tombstone := toolscache.DeletedFinalStateUnknown{Key: "apps/a", Obj: a}
	got, err := keep(tombstone)
	require.NoError(t, err)
	assert.Equal(t, tombstone, got)
}

// TestInternerStaysBounded: past maxInterned entries the tables start
// afresh.
func TestInternerStaysBounded(t *testing.T) {
	t.Parallel()
	in := newInterner()
	for i := range maxInterned + 10 {
		in.intern(&metav1.ObjectMeta{Labels: map[string]string{"n": fmt.Sprint(i)}})
		assert.LessOrEqual(t, in.entries, maxInterned)
	}
	assert.Equal(t, 10, in.entries)
}
