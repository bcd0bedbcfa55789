package contract_test

import (
	"context"
	"fmt"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zaptest"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	chaosv1 "github.com/hexagonal-operator/operator/api/chaos/v1"
	"github.com/hexagonal-operator/operator/internal/adapters/cache"
	"github.com/hexagonal-operator/operator/internal/adapters/kube"
	"github.com/hexagonal-operator/operator/internal/ports"
	"github.com/hexagonal-operator/operator/test/controlplane"
	"github.com/hexagonal-operator/operator/test/portstest"
)

// cluster is one API server with the operator's adapters on it, as the
// operator wires them: the reader is the shared informer cache, which lags
// behind the API server; the writer talks to it directly. "Someone else"
// is a writer on separate clients, as another controller or a user with
// kubectl would be, and the authoritative read bypasses every cache.
type cluster struct {
	cp         *controlplane.ControlPlane
	cache      *cache.Cache
	clients    *kube.Clients
	other      *kube.Clients
	namespaces atomic.Int32
}

func startCluster(t *testing.T) *cluster {
	t.Helper()
	cp := controlplane.StartT(t, controlplane.Options{})
	_, err := cp.InstallCRDs(t.Context(), "../../config/crd", nil)
	require.NoError(t, err)
	clients, err := kube.NewClients(cp.Config, kube.Options{})
	require.NoError(t, err)
	other, err := kube.NewClients(cp.Config, kube.Options{UserAgent: "someone-else"})
	require.NoError(t, err)
	c, err := cache.New(clients.Kubernetes, clients.Metadata, nil, zaptest.NewLogger(t), cache.Options{})
	require.NoError(t, err)
	require.NoError(t, c.Start(t.Context()))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		assert.NoError(t, c.Stop(ctx))
	})
	return &cluster{cp: cp, cache: c, clients: clients, other: other}
}

// fixture returns the suite's fixture factory for resource, read through
// reader (the cache, or the API server itself); each test gets a namespace
// of its own.
func fixture[T, R cache.Object](t *testing.T, cl *cluster, resource schema.GroupVersionResource, reader func() (ports.Reader[R], error)) func(*testing.T) portstest.Fixture[T, R] {
	t.Helper()
	r, err := reader()
	require.NoError(t, err)
	w, err := kube.NewWriter[T](cl.clients, resource)
	require.NoError(t, err)
	other, err := kube.NewWriter[T](cl.other, resource)
	require.NoError(t, err)
	get := authoritative[T](cl, resource)
	return func(t *testing.T) portstest.Fixture[T, R] {
		ns := fmt.Sprintf("contract-%d", cl.namespaces.Add(1))
		require.NoError(t, cl.cp.EnsureNamespace(t.Context(), ns))
		return portstest.Fixture[T, R]{Namespace: ns, Reader: r, Writer: w, Other: other, Get: get}
	}
}

// authoritative reads an object straight from the API server, through the
// dynamic client and a typed decode.
func authoritative[T cache.Object](cl *cluster, resource schema.GroupVersionResource) func(context.Context, types.NamespacedName) (T, error) {
	return func(ctx context.Context, key types.NamespacedName) (T, error) {
		out := reflect.New(reflect.TypeFor[T]().Elem()).Interface().(T)
		u, err := cl.other.Dynamic.Resource(resource).Namespace(key.Namespace).Get(ctx, key.Name, metav1.GetOptions{})
		if err != nil {
			return out, err
		}
		return out, runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, out)
	}
}

func TestObjectsContract(t *testing.T) {
	t.Parallel()
	cl := startCluster(t)
	replicaSets := appsv1.SchemeGroupVersion.WithResource("replicasets")
	pods := corev1.SchemeGroupVersion.WithResource("pods")

	t.Run("ReplicaSets", func(t *testing.T) {
		t.Parallel()
		portstest.RunObjects(t, portstest.ReplicaSets, fixture[*appsv1.ReplicaSet](t, cl, replicaSets,
			func() (ports.Reader[*appsv1.ReplicaSet], error) {
				return cache.NewResource[*appsv1.ReplicaSet](cl.cache, replicaSets)
			}))
	})
	t.Run("Pods", func(t *testing.T) {
		t.Parallel()
		portstest.RunObjects(t, portstest.Pods, fixture[*corev1.Pod](t, cl, pods,
			func() (ports.Reader[*metav1.PartialObjectMetadata], error) {
				return cache.NewMetadataResource(cl.cache, pods, "Pod")
			}))
	})
	// As the chaospod controller caches its Pods: typed, narrowed by a
	// label selector, beside the metadata-only informer of every Pod.
	t.Run("PodsSelected", func(t *testing.T) {
		t.Parallel()
		sel, err := labels.Parse("app")
		require.NoError(t, err)
		newFixture := fixture[*corev1.Pod](t, cl, pods,
			func() (ports.Reader[*corev1.Pod], error) {
				return cache.NewResource[*corev1.Pod](cl.cache, pods, cache.Selector(sel))
			})
		portstest.RunObjects(t, portstest.Pods, func(t *testing.T) portstest.Fixture[*corev1.Pod, *corev1.Pod] {
			f := newFixture(t)
			f.Selector = sel
			return f
		})
	})
	t.Run("ChaosPods", func(t *testing.T) {
		t.Parallel()
		portstest.RunObjects(t, portstest.ChaosPods, fixture[*chaosv1.ChaosPod](t, cl, chaosv1.GroupVersionResource,
			func() (ports.Reader[*chaosv1.ChaosPod], error) {
				return cache.NewDynamicResource[*chaosv1.ChaosPod](cl.cache, cl.clients.Dynamic, chaosv1.GroupVersionResource)
			}))
	})
	// The live reader the operator's Pod validator trusts, held to the
	// same behaviour as the cache and the in-memory twin.
	t.Run("ChaosPodsReadLive", func(t *testing.T) {
		t.Parallel()
		portstest.RunObjects(t, portstest.ChaosPods, fixture[*chaosv1.ChaosPod](t, cl, chaosv1.GroupVersionResource,
			func() (ports.Reader[*chaosv1.ChaosPod], error) {
				return kube.NewReader[*chaosv1.ChaosPod](cl.clients, chaosv1.GroupVersionResource)
			}))
	})
}
