package helm_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/restmapper"
	"k8s.io/utils/ptr"

	"github.com/hexagonal-operator/operator/test/controlplane"
)

// present returns the keys of the objects of objs the cluster has.
func present(t *testing.T, cp *controlplane.ControlPlane, objs []*unstructured.Unstructured) []string {
	t.Helper()
	dyn, err := dynamic.NewForConfig(cp.Config)
	require.NoError(t, err)
	disc, err := discovery.NewDiscoveryClientForConfig(cp.Config)
	require.NoError(t, err)
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc))
	var out []string
	for _, o := range objs {
		gvk := o.GroupVersionKind()
		mapping, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		require.NoError(t, err, key(o))
		var ri dynamic.ResourceInterface = dyn.Resource(mapping.Resource)
		if o.GetNamespace() != "" {
			ri = dyn.Resource(mapping.Resource).Namespace(o.GetNamespace())
		}
		_, err = ri.Get(context.Background(), o.GetName(), metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		require.NoError(t, err, key(o))
		out = append(out, key(o))
	}
	slices.Sort(out)
	return out
}

// helm install, upgrade and uninstall as docs/deploying.md types them, on
// the test control plane (no kubelet: the operator's Pods never run, which
// none of this needs). The install creates every object the chart renders,
// its admission policies name the operator's ServiceAccount in the
// release's namespace (a Lease write the operator may not make is
// refused), an upgrade with other values changes the Deployment, and the
// uninstall removes everything but the CRD, which the chart keeps.
func TestInstallUpgradeUninstall(t *testing.T) {
	t.Parallel()
	cp := controlplane.StartT(t, controlplane.Options{})
	ctx := context.Background()
	admin := cp.Clientset()
	env := helmEnv(t, cp.KubeconfigPath)
	const ns = "chart-test" // not config/default's: the chart follows the release
	objs := render(t, ns)

	began := time.Now()
	out := helm(t, env, "install", release, chartPath(t), "--namespace", ns, "--create-namespace")
	t.Logf("figure: helm install of %d objects in %s", len(objs), time.Since(began).Round(time.Millisecond))
	assert.Contains(t, out, "STATUS: deployed")
	assert.Contains(t, out, "helm uninstall keeps the ChaosPod CRD", "NOTES")
	require.Equal(t, keys(objs), present(t, cp, objs), "every object the chart renders is installed")
	dep, err := admin.AppsV1().Deployments(ns).Get(ctx, "hexagonal-operator-controller-manager", metav1.GetOptions{})
	require.NoError(t, err)
	assert.EqualValues(t, 2, *dep.Spec.Replicas)
	assert.Equal(t, "hexagonal-operator:"+version(t), dep.Spec.Template.Spec.Containers[0].Image)
	assert.Equal(t, release, dep.Annotations["meta.helm.sh/release-name"])

	// The policies confine the ServiceAccount of this release's namespace:
	// its Role lets it create any Lease there, the policy only its own.
	sa, err := cp.ServiceAccountConfig(ctx, ns, "hexagonal-operator-controller-manager")
	require.NoError(t, err)
	asOperator, err := kubernetes.NewForConfig(sa)
	require.NoError(t, err)
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "another", Namespace: ns}, Spec: coordinationv1.LeaseSpec{
		HolderIdentity: ptr.To("pod_01234567-89ab-cdef-0123-456789abcdef"), LeaseDurationSeconds: ptr.To[int32](15),
		AcquireTime: &metav1.MicroTime{Time: time.Now()}, RenewTime: &metav1.MicroTime{Time: time.Now()},
	}}
	require.Eventually(t, func() bool { // the policy binds a moment after it is created
		_, err = asOperator.CoordinationV1().Leases(ns).Create(ctx, lease, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err != nil
	}, 30*time.Second, 200*time.Millisecond, "a Lease of another name is refused")
	assert.ErrorContains(t, err, "ValidatingAdmissionPolicy 'hexagonal-operator-leader-lease'")
	lease.Name = "hexagonal-operator-leader"
	_, err = asOperator.CoordinationV1().Leases(ns).Create(ctx, lease, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	assert.NoError(t, err, "its own Lease, for the chart's lease duration, is allowed")

	began = time.Now()
	out = helm(t, env, "upgrade", release, chartPath(t), "--namespace", ns, "--set", "replicas=3", "--set", "logLevel=debug")
	t.Logf("figure: helm upgrade in %s", time.Since(began).Round(time.Millisecond))
	assert.Contains(t, out, "REVISION: 2")
	dep, err = admin.AppsV1().Deployments(ns).Get(ctx, "hexagonal-operator-controller-manager", metav1.GetOptions{})
	require.NoError(t, err)
	assert.EqualValues(t, 3, *dep.Spec.Replicas)
	assert.Contains(t, dep.Spec.Template.Spec.Containers[0].Args, "--zap-log-level=debug")
	assert.Equal(t, keys(objs), present(t, cp, objs), "the same objects")

	began = time.Now()
	helm(t, env, "uninstall", release, "--namespace", ns)
	t.Logf("figure: helm uninstall in %s", time.Since(began).Round(time.Millisecond))
	var crd []string
	for _, o := range objs {
		if o.GetKind() == "CustomResourceDefinition" {
			crd = append(crd, key(o))
		}
	}
	require.Len(t, crd, 1)
	var left []string
	require.Eventually(t, func() bool {
		left = present(t, cp, objs)
		return slices.Equal(crd, left)
	}, 30*time.Second, 200*time.Millisecond, "the CRD alone is left: %v", left)
	releases, err := admin.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{LabelSelector: "owner=helm"})
	require.NoError(t, err)
	assert.Empty(t, releases.Items, "no release history left")
}
