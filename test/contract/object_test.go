package contract_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zaptest"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"

	"github.com/hexagonal-operator/operator/internal/adapters/cache"
	"github.com/hexagonal-operator/operator/internal/adapters/kube"
	"github.com/hexagonal-operator/operator/internal/ports/portstest"
	"github.com/hexagonal-operator/operator/test/controlplane"
)

// TestObjectStore runs the generic object suite against what app.For wires
// for a controller added from outside: the cache resource (reader) and the
// metadata patcher (writer), for ConfigMaps.
func TestObjectStore(t *testing.T) {
	t.Parallel()
	cp := controlplane.StartT(t, controlplane.Options{})
	clients, err := kube.NewClients(cp.Config, kube.Options{})
	require.NoError(t, err)
	resource := corev1.SchemeGroupVersion.WithResource("configmaps")
	writer, err := kube.NewMetadataPatcher(clients.Metadata, resource)
	require.NoError(t, err)
	c, err := cache.New(clients.Kubernetes, clients.Metadata, nil, zaptest.NewLogger(t), cache.Options{})
	require.NoError(t, err)
	reader, err := cache.NewResource[*corev1.ConfigMap](c, resource)
	require.NoError(t, err)
	require.NoError(t, c.Start(t.Context()))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		assert.NoError(t, c.Stop(ctx))
	})

	other := cp.Clientset()
	var namespaces atomic.Int32
	portstest.RunObjectStore(t, func(t *testing.T) portstest.ObjectFixture {
		ns := fmt.Sprintf("contract-object-%d", namespaces.Add(1))
		require.NoError(t, cp.EnsureNamespace(t.Context(), ns))
		return portstest.ObjectFixture{
			Namespace: ns,
			Reader:    reader,
			Writer:    writer,
			Create: func(ctx context.Context, cm *corev1.ConfigMap) error {
				_, err := other.CoreV1().ConfigMaps(cm.Namespace).Create(ctx, cm, metav1.CreateOptions{FieldManager: "someone-else"})
				return err
			},
			SetForeignAnnotation: func(ctx context.Context, key types.NamespacedName, annotation, value string) error {
				return retry.RetryOnConflict(retry.DefaultRetry, func() error {
					cm, err := other.CoreV1().ConfigMaps(key.Namespace).Get(ctx, key.Name, metav1.GetOptions{})
					if err != nil {
						return err
					}
					if cm.Annotations == nil {
						cm.Annotations = map[string]string{}
					}
					cm.Annotations[annotation] = value
					_, err = other.CoreV1().ConfigMaps(key.Namespace).Update(ctx, cm, metav1.UpdateOptions{FieldManager: "someone-else"})
					return err
				})
			},
			Delete: func(ctx context.Context, key types.NamespacedName) error {
				return other.CoreV1().ConfigMaps(key.Namespace).Delete(ctx, key.Name, metav1.DeleteOptions{})
			},
			Get: func(ctx context.Context, key types.NamespacedName) (*corev1.ConfigMap, error) {
				return other.CoreV1().ConfigMaps(key.Namespace).Get(ctx, key.Name, metav1.GetOptions{})
			},
		}
	})
}
