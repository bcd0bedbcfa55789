package controlplane_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/hexagonal-operator/operator/test/controlplane"
)

// DryRunApply has the API server validate objects without keeping them,
// and reports what it rejects.
func TestDryRunApplyValidatesAndPersistsNothing(t *testing.T) {
	t.Parallel()
	cp := controlplane.StartT(t, controlplane.Options{})
	ctx := context.Background()
	cm := func(data any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "dry", "namespace": "default"},
			"data":     data,
		}}
	}

	require.NoError(t, cp.DryRunApply(ctx, cm(map[string]any{"k": "v"})))
	_, err := cp.Clientset().CoreV1().ConfigMaps("default").Get(ctx, "dry", metav1.GetOptions{})
	require.True(t, apierrors.IsNotFound(err), "dry run kept the object: %v", err)

	err = cp.DryRunApply(ctx, cm(map[string]any{"k": 1}))
	require.ErrorContains(t, err, "ConfigMap dry")
}
