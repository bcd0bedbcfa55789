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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	chaosv1 "github.com/hexagonal-operator/operator/api/chaos/v1"
	"github.com/hexagonal-operator/operator/internal/adapters/cache"
	"github.com/hexagonal-operator/operator/internal/adapters/kube"
	"github.com/hexagonal-operator/operator/internal/ports/portstest"
	"github.com/hexagonal-operator/operator/test/controlplane"
)

// TestChaosPodStore runs the suite against the ChaosPod cache (reader) and
// writer on a real API server with the CRD from config/crd. Only v1 is
// used, so the conversion webhook is never called.
func TestChaosPodStore(t *testing.T) {
	t.Parallel()
	cp := controlplane.StartT(t, controlplane.Options{})
	_, err := cp.InstallCRDs(t.Context(), "../../config/crd", nil)
	require.NoError(t, err)
	clients, err := kube.NewClients(cp.Config, kube.Options{})
	require.NoError(t, err)
	writer, err := kube.NewChaosPodWriter(clients.Dynamic)
	require.NoError(t, err)
	reader, err := cache.NewChaosPodCache(clients.Dynamic, zaptest.NewLogger(t), cache.Options{})
	require.NoError(t, err)
	require.NoError(t, reader.Start(t.Context()))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		assert.NoError(t, reader.Stop(ctx))
	})
	other, err := kube.NewClients(cp.Config, kube.Options{})
	require.NoError(t, err)

	var namespaces atomic.Int32
	portstest.RunChaosPodStore(t, func(t *testing.T) portstest.ChaosPodFixture {
		ns := fmt.Sprintf("chaos-contract-%d", namespaces.Add(1))
		require.NoError(t, cp.EnsureNamespace(t.Context(), ns))
		return portstest.ChaosPodFixture{
			Namespace: ns,
			Reader:    reader,
			Writer:    writer,
			Create: func(ctx context.Context, obj *chaosv1.ChaosPod) (*chaosv1.ChaosPod, error) {
				u, err := kube.ChaosPodToUnstructured(obj)
				if err != nil {
					return nil, err
				}
				out, err := other.Dynamic.Resource(chaosv1.GroupVersionResource).Namespace(obj.Namespace).
					Create(ctx, u, metav1.CreateOptions{FieldManager: "someone-else"})
				if err != nil {
					return nil, err
				}
				return kube.ChaosPodFromUnstructured(out)
			},
		}
	})
}

// TestPodStore runs the Pod suite against the metadata Pod cache and the
// Pod writer.
func TestPodStore(t *testing.T) {
	t.Parallel()
	cp := controlplane.StartT(t, controlplane.Options{})
	clients, err := kube.NewClients(cp.Config, kube.Options{})
	require.NoError(t, err)
	writer, err := kube.NewPodWriter(clients.Kubernetes)
	require.NoError(t, err)
	reader, err := cache.New(clients.Kubernetes, clients.Metadata, nil, zaptest.NewLogger(t), cache.Options{})
	require.NoError(t, err)
	require.NoError(t, reader.Start(t.Context()))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		assert.NoError(t, reader.Stop(ctx))
	})
	var namespaces atomic.Int32
	portstest.RunPodStore(t, func(t *testing.T) portstest.PodFixture {
		ns := fmt.Sprintf("pod-contract-%d", namespaces.Add(1))
		require.NoError(t, cp.EnsureNamespace(t.Context(), ns))
		return portstest.PodFixture{Namespace: ns, Reader: reader, Writer: writer}
	})
}
