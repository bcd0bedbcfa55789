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
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"

	"github.com/hexagonal-operator/operator/internal/adapters/cache"
	"github.com/hexagonal-operator/operator/internal/adapters/kube"
	"github.com/hexagonal-operator/operator/internal/ports/portstest"
	"github.com/hexagonal-operator/operator/test/controlplane"
)

// TestReplicaSetStore runs the suite against the ReplicaSet cache (reader)
// and writer (labeler) as the operator wires them: the reader lags behind
// the API server, the writer talks to it directly.
func TestReplicaSetStore(t *testing.T) {
	t.Parallel()
	cp := controlplane.StartT(t, controlplane.Options{})
	clients, err := kube.NewClients(cp.Config, kube.Options{})
	require.NoError(t, err)
	writer, err := kube.NewReplicaSetWriter(clients.Kubernetes)
	require.NoError(t, err)
	reader, err := cache.New(clients.Kubernetes, clients.Metadata, nil, zaptest.NewLogger(t), cache.Options{})
	require.NoError(t, err)
	require.NoError(t, reader.Start(t.Context()))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		assert.NoError(t, reader.Stop(ctx))
	})

	// "Someone else" is a separate client, as another controller or a user
	// with kubectl would be.
	other := cp.Clientset()
	var namespaces atomic.Int32
	portstest.RunReplicaSetStore(t, func(t *testing.T) portstest.ReplicaSetFixture {
		ns := fmt.Sprintf("contract-%d", namespaces.Add(1))
		require.NoError(t, cp.EnsureNamespace(t.Context(), ns))
		return portstest.ReplicaSetFixture{
			Namespace: ns,
			Reader:    reader,
			Labeler:   writer,
			Create: func(ctx context.Context, rs *appsv1.ReplicaSet) error {
				_, err := other.AppsV1().ReplicaSets(rs.Namespace).Create(ctx, rs, metav1.CreateOptions{FieldManager: "someone-else"})
				return err
			},
			// A read-modify-write, the way most controllers write: it
			// conflicts with (and then retries after) any write that lands
			// between its read and its update.
			SetForeignLabel: func(ctx context.Context, key types.NamespacedName, label, value string) error {
				return retry.RetryOnConflict(retry.DefaultRetry, func() error {
					rs, err := other.AppsV1().ReplicaSets(key.Namespace).Get(ctx, key.Name, metav1.GetOptions{})
					if err != nil {
						return err
					}
					if rs.Labels == nil {
						rs.Labels = map[string]string{}
					}
					rs.Labels[label] = value
					_, err = other.AppsV1().ReplicaSets(key.Namespace).Update(ctx, rs, metav1.UpdateOptions{FieldManager: "someone-else"})
					return err
				})
			},
			Delete: func(ctx context.Context, key types.NamespacedName) error {
				return other.AppsV1().ReplicaSets(key.Namespace).Delete(ctx, key.Name, metav1.DeleteOptions{})
			},
			Get: func(ctx context.Context, key types.NamespacedName) (*appsv1.ReplicaSet, error) {
				return other.AppsV1().ReplicaSets(key.Namespace).Get(ctx, key.Name, metav1.GetOptions{})
			},
		}
	})
}
