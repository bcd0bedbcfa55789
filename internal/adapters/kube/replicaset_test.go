package kube_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/hexagonal-operator/operator/internal/adapters/kube"
	"github.com/hexagonal-operator/operator/internal/kubeclient/kubeclienttest"
	"github.com/hexagonal-operator/operator/internal/ports"
)

func TestNewReplicaSetWriterNeedsAClient(t *testing.T) {
	t.Parallel()
	w, err := kube.NewReplicaSetWriter(nil)
	assert.Error(t, err)
	assert.Nil(t, w)
}

func TestSetReplicaSetLabels(t *testing.T) {
	t.Parallel()
	key := types.NamespacedName{Namespace: "apps", Name: "web"}
	tests := []struct {
		name     string
		existing map[string]string
		set      map[string]string
		want     map[string]string
	}{
		{"adds to no labels", nil, map[string]string{"hello": "world"}, map[string]string{"hello": "world"}},
		{"keeps other labels", map[string]string{"app": "web"}, map[string]string{"hello": "world"}, map[string]string{"app": "web", "hello": "world"}},
		{"overwrites a different value", map[string]string{"app": "web", "hello": "moon"}, map[string]string{"hello": "world"}, map[string]string{"app": "web", "hello": "world"}},
		{"empty map writes nothing", map[string]string{"app": "web"}, map[string]string{}, map[string]string{"app": "web"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rs := &appsv1.ReplicaSet{
				ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name, Labels: tt.existing, Annotations: map[string]string{"a": "b"}},
				Spec:       appsv1.ReplicaSetSpec{MinReadySeconds: 7},
			}
			client := kubeclienttest.Wrap(fake.NewClientset(rs))
			w, err := kube.NewReplicaSetWriter(client)
			require.NoError(t, err)

			require.NoError(t, w.SetReplicaSetLabels(context.Background(), key, tt.set))

			got, err := client.AppsV1().ReplicaSets(key.Namespace).Get(context.Background(), key.Name, metav1.GetOptions{})
			require.NoError(t, err)
			assert.Equal(t, tt.want, got.Labels)
			assert.Equal(t, map[string]string{"a": "b"}, got.Annotations)
			assert.Equal(t, int32(7), got.Spec.MinReadySeconds)
		})
	}
}

func TestSetReplicaSetLabelsSendsAMergePatchOfLabelsOnly(t *testing.T) {
	t.Parallel()
	client := fake.NewClientset(&appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "web"}})
	var patch *k8stesting.PatchActionImpl
	client.PrependReactor("patch", "replicasets", func(action k8stesting.Action) (bool, runtime.Object, error) {
		p := action.(k8stesting.PatchActionImpl)
		patch = &p
		return false, nil, nil
	})
	w, err := kube.NewReplicaSetWriter(kubeclienttest.Wrap(client))
	require.NoError(t, err)

	require.NoError(t, w.SetReplicaSetLabels(context.Background(), types.NamespacedName{Namespace: "apps", Name: "web"}, map[string]string{"hello": "world"}))

	require.NotNil(t, patch)
	assert.Equal(t, types.MergePatchType, patch.GetPatchType())
	assert.JSONEq(t, `{"metadata":{"labels":{"hello":"world"}}}`, string(patch.GetPatch()))
	assert.Equal(t, kube.FieldManager, patch.PatchOptions.FieldManager)
}

func TestSetReplicaSetLabelsOnMissingReplicaSet(t *testing.T) {
	t.Parallel()
	w, err := kube.NewReplicaSetWriter(kubeclienttest.Wrap(fake.NewClientset()))
	require.NoError(t, err)

	err = w.SetReplicaSetLabels(context.Background(), types.NamespacedName{Namespace: "apps", Name: "gone"}, map[string]string{"hello": "world"})

	require.ErrorIs(t, err, ports.ErrNotFound)
	assert.Contains(t, err.Error(), "apps/gone")
}
