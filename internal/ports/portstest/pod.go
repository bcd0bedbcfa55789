package portstest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/hexagonal-operator/operator/internal/ports"
)

// PodFixture is one implementation of ports.PodReader and ports.PodWriter.
type PodFixture struct {
	// Namespace exists; every test uses its own names.
	Namespace string
	Reader    ports.PodReader
	Writer    ports.PodWriter
}

// RunPodStore checks the behaviour that the domain relies on from
// ports.PodReader and ports.PodWriter.
func RunPodStore(t *testing.T, newFixture func(t *testing.T) PodFixture) {
	t.Helper()
	tests := []struct {
		name string
		run  func(t *testing.T, f PodFixture)
	}{
		{"GetMissingIsNotFound", podGetMissing},
		{"CreatedIsReadableWithOwner", podCreatedReadable},
		{"CreateTwiceAlreadyExists", podCreateTwice},
		{"DeleteChecksUID", podDeleteChecksUID},
		{"DeleteMissingIsNotFound", podDeleteMissing},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.run(t, newFixture(t))
		})
	}
}

func newPod(ns, name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"app": name}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
	}
}

func podGetMissing(t *testing.T, f PodFixture) {
	_, err := f.Reader.GetPod(t.Context(), types.NamespacedName{Namespace: f.Namespace, Name: "missing"})
	require.ErrorIs(t, err, ports.ErrNotFound)
}

func podCreatedReadable(t *testing.T, f PodFixture) {
	pod := newPod(f.Namespace, "readable")
	pod.OwnerReferences = []metav1.OwnerReference{{
		APIVersion: "chaosapps.metamagical.io/v1", Kind: "ChaosPod", Name: "owner", UID: "owner-uid",
		Controller: new(true),
	}}
	created, err := f.Writer.CreatePod(t.Context(), pod)
	require.NoError(t, err)
	assert.NotEmpty(t, created.UID)
	assert.False(t, created.CreationTimestamp.IsZero())
	key := types.NamespacedName{Namespace: f.Namespace, Name: "readable"}
	var got *metav1.PartialObjectMetadata
	require.Eventually(t, func() bool {
		p, err := f.Reader.GetPod(t.Context(), key)
		got = p
		return err == nil
	}, waitFor, tick)
	assert.Equal(t, created.UID, got.UID)
	assert.Equal(t, map[string]string{"app": "readable"}, got.Labels)
	require.NotNil(t, metav1.GetControllerOf(got))
	assert.Equal(t, types.UID("owner-uid"), metav1.GetControllerOf(got).UID)
}

func podCreateTwice(t *testing.T, f PodFixture) {
	_, err := f.Writer.CreatePod(t.Context(), newPod(f.Namespace, "twice"))
	require.NoError(t, err)
	_, err = f.Writer.CreatePod(t.Context(), newPod(f.Namespace, "twice"))
	require.ErrorIs(t, err, ports.ErrAlreadyExists)
}

func podDeleteChecksUID(t *testing.T, f PodFixture) {
	key := types.NamespacedName{Namespace: f.Namespace, Name: "uid"}
	created, err := f.Writer.CreatePod(t.Context(), newPod(key.Namespace, key.Name))
	require.NoError(t, err)
	require.ErrorIs(t, f.Writer.DeletePod(t.Context(), key, "another-uid"), ports.ErrConflict)
	require.NoError(t, f.Writer.DeletePod(t.Context(), key, created.UID))
	require.Eventually(t, func() bool {
		_, err := f.Reader.GetPod(t.Context(), key)
		return err != nil && assert.ErrorIs(t, err, ports.ErrNotFound)
	}, waitFor, tick)
}

func podDeleteMissing(t *testing.T, f PodFixture) {
	err := f.Writer.DeletePod(t.Context(), types.NamespacedName{Namespace: f.Namespace, Name: "missing"}, "")
	require.ErrorIs(t, err, ports.ErrNotFound)
}
