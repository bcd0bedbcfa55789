package kube_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	metadatafake "k8s.io/client-go/metadata/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/hexagonal-operator/operator/internal/adapters/kube"
	"github.com/hexagonal-operator/operator/internal/ports"
	"github.com/hexagonal-operator/operator/test/controlplane"
)

var configMapsResource = corev1.SchemeGroupVersion.WithResource("configmaps")

func fakeMetadataClient() *metadatafake.FakeMetadataClient {
	scheme := metadatafake.NewTestScheme()
	_ = metav1.AddMetaToScheme(scheme)
	return metadatafake.NewSimpleMetadataClient(scheme)
}

func TestNewMetadataPatcherChecksItsArguments(t *testing.T) {
	t.Parallel()
	_, err := kube.NewMetadataPatcher(nil, configMapsResource)
	assert.Error(t, err, "no client")
	for name, resource := range map[string]schema.GroupVersionResource{
		"no version":  {Resource: "configmaps"},
		"no resource": corev1.SchemeGroupVersion.WithResource(""),
	} {
		p, err := kube.NewMetadataPatcher(fakeMetadataClient(), resource)
		assert.Error(t, err, name)
		assert.Nil(t, p, name)
	}
}

// The request is a merge patch of metadata.annotations alone, under the
// operator's field manager, in the object's namespace, or none for a
// cluster-scoped object; an empty map sends nothing.
func TestSetAnnotationsSendsAMergePatchOfAnnotationsOnly(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name          string
		resource      schema.GroupVersionResource
		key           types.NamespacedName
		annotations   map[string]string
		wantPatch     string
		wantNamespace string
	}{
		{
			name:     "namespaced",
			resource: configMapsResource, key: types.NamespacedName{Namespace: "shop", Name: "settings"},
			annotations: map[string]string{"example.io/hash": "abc"},
			wantPatch:   `{"metadata":{"annotations":{"example.io/hash":"abc"}}}`, wantNamespace: "shop",
		},
		{
			name:     "cluster-scoped",
			resource: rbacv1.SchemeGroupVersion.WithResource("clusterroles"), key: types.NamespacedName{Name: "reader"},
			annotations: map[string]string{"a": "1", "b": "2"},
			wantPatch:   `{"metadata":{"annotations":{"a":"1","b":"2"}}}`,
		},
		{
			name:     "nothing to set",
			resource: configMapsResource, key: types.NamespacedName{Namespace: "shop", Name: "settings"},
			annotations: map[string]string{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			client := fakeMetadataClient()
			var patches []k8stesting.PatchActionImpl
			client.PrependReactor("patch", "*", func(action k8stesting.Action) (bool, runtime.Object, error) {
				patches = append(patches, action.(k8stesting.PatchActionImpl))
				return true, &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{ResourceVersion: "7"}}, nil
			})
			p, err := kube.NewMetadataPatcher(client, tt.resource)
			require.NoError(t, err)

			require.NoError(t, p.SetAnnotations(context.Background(), tt.key, tt.annotations))

			if tt.wantPatch == "" {
				assert.Empty(t, patches)
				return
			}
			require.Len(t, patches, 1)
			got := patches[0]
			assert.Equal(t, tt.resource, got.GetResource())
			assert.Equal(t, tt.wantNamespace, got.GetNamespace())
			assert.Equal(t, tt.key.Name, got.GetName())
			assert.Equal(t, types.MergePatchType, got.GetPatchType())
			assert.JSONEq(t, tt.wantPatch, string(got.GetPatch()))
		})
	}
}

func TestSetAnnotationsTranslatesErrors(t *testing.T) {
	t.Parallel()
	gr := configMapsResource.GroupResource()
	tests := []struct {
		name string
		err  error
		want error
	}{
		{"not found", apierrors.NewNotFound(gr, "settings"), ports.ErrNotFound},
		{"invalid", apierrors.NewInvalid(schema.GroupKind{Kind: "ConfigMap"}, "settings", nil), ports.ErrInvalid},
		{"forbidden", apierrors.NewForbidden(gr, "settings", errors.New("rbac")), ports.ErrForbidden},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			client := fakeMetadataClient()
			client.PrependReactor("patch", "configmaps", func(k8stesting.Action) (bool, runtime.Object, error) {
				return true, nil, tt.err
			})
			p, err := kube.NewMetadataPatcher(client, configMapsResource)
			require.NoError(t, err)

			err = p.SetAnnotations(context.Background(), types.NamespacedName{Namespace: "shop", Name: "settings"}, map[string]string{"a": "1"})

			require.ErrorIs(t, err, tt.want)
			assert.Contains(t, err.Error(), "patch configmaps shop/settings")
			var status apierrors.APIStatus
			assert.False(t, errors.As(err, &status), "no API error type leaks through the port")
		})
	}
}

// TestMetadataPatcherOnAPIServer proves what the fake cannot: the metadata
// client's merge patch reaches the whole object on a real server, keeps
// what others wrote, and records the operator's field manager.
func TestMetadataPatcherOnAPIServer(t *testing.T) {
	t.Parallel()
	cp := controlplane.StartT(t, controlplane.Options{})
	const ns = "metadata-patcher"
	ctx := t.Context()
	require.NoError(t, cp.EnsureNamespace(ctx, ns))
	admin := cp.Clientset()
	clients, err := kube.NewClients(cp.Config, kube.Options{})
	require.NoError(t, err)
	p, err := kube.NewMetadataPatcher(clients.Metadata, configMapsResource)
	require.NoError(t, err)
	key := types.NamespacedName{Namespace: ns, Name: "settings"}
	_, err = admin.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: key.Name, Annotations: map[string]string{"team": "payments"}},
		Data:       map[string]string{"color": "blue"},
	}, metav1.CreateOptions{FieldManager: "someone-else"})
	require.NoError(t, err)

	t.Run("annotations are merged under the operator's field manager", func(t *testing.T) {
		require.NoError(t, p.SetAnnotations(ctx, key, map[string]string{"example.io/hash": "abc"}))

		got, err := admin.CoreV1().ConfigMaps(ns).Get(ctx, key.Name, metav1.GetOptions{})
		require.NoError(t, err)
		assert.Equal(t, map[string]string{"team": "payments", "example.io/hash": "abc"}, got.Annotations)
		assert.Equal(t, map[string]string{"color": "blue"}, got.Data)
		var owned bool
		for _, mf := range got.ManagedFields {
			if mf.Manager == kube.FieldManager {
				owned = true
				assert.Contains(t, string(mf.FieldsV1.Raw), `"f:example.io/hash"`, "the operator owns the annotation it wrote")
				assert.NotContains(t, string(mf.FieldsV1.Raw), `"f:team"`, "and nothing else")
			}
		}
		assert.True(t, owned, "managers: %v", got.ManagedFields)
	})

	t.Run("cluster-scoped objects", func(t *testing.T) {
		_, err := admin.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "metadata-patcher-test"}}, metav1.CreateOptions{})
		require.NoError(t, err)
		roles, err := kube.NewMetadataPatcher(clients.Metadata, rbacv1.SchemeGroupVersion.WithResource("clusterroles"))
		require.NoError(t, err)

		require.NoError(t, roles.SetAnnotations(ctx, types.NamespacedName{Name: "metadata-patcher-test"}, map[string]string{"a": "1"}))

		got, err := admin.RbacV1().ClusterRoles().Get(ctx, "metadata-patcher-test", metav1.GetOptions{})
		require.NoError(t, err)
		assert.Equal(t, "1", got.Annotations["a"])
	})

	t.Run("errors arrive as port errors", func(t *testing.T) {
		nobody, err := kube.NewClients(cp.ImpersonatedConfig("nobody"), kube.Options{})
		require.NoError(t, err)
		forbidden, err := kube.NewMetadataPatcher(nobody.Metadata, configMapsResource)
		require.NoError(t, err)
		tests := []struct {
			name        string
			patcher     *kube.MetadataPatcher
			key         types.NamespacedName
			annotations map[string]string
			want        error
		}{
			{"missing configmap", p, types.NamespacedName{Namespace: ns, Name: "absent"}, map[string]string{"a": "1"}, ports.ErrNotFound},
			{"invalid annotation key", p, key, map[string]string{"not a valid key!": "1"}, ports.ErrInvalid},
			{"no permission", forbidden, key, map[string]string{"a": "1"}, ports.ErrForbidden},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				err := tt.patcher.SetAnnotations(ctx, tt.key, tt.annotations)
				require.ErrorIs(t, err, tt.want)
				t.Log(err)
			})
		}
	})
}
