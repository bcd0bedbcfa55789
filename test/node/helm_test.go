package node_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	chaosv1 "github.com/hexagonal-operator/operator/api/chaos/v1"
	"github.com/hexagonal-operator/operator/test/node"
)

// chartRelease is the release docs/deploying.md installs the chart as.
const chartRelease = "hexagonal-operator"

// TestOperatorFromTheHelmChart installs the operator's image with the Helm
// chart (dist/chart) instead of make deploy, as docs/deploying.md types it,
// and holds it to what the make deploy test holds config/default to: the
// replicas Ready, a user's ReplicaSet labeled and its Pods admitted and
// annotated by the webhooks, a ChaosPod's Pods created. Then helm upgrade
// with another log level rolls the operator while Pods are being created,
// none of whose admissions may fail, and helm uninstall removes the
// operator and keeps the CRD.
func TestOperatorFromTheHelmChart(t *testing.T) {
	c, ctx, cs, dyn := nodeWithOperatorImage(t, 20*time.Minute)
	repository, tag, _ := strings.Cut(node.OperatorIMG, ":")

	began := time.Now()
	out, err := c.Helm(ctx, "install", chartRelease, "dist/chart", "--namespace", opNamespace, "--create-namespace",
		"--set", "image.repository="+repository, "--set", "image.tag="+tag)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("helm install:\n%s", strings.TrimSpace(out))
	waitAvailable(ctx, t, cs, 2, 3*time.Minute)
	t.Logf("figure: helm install → Deployment %s Available 2/2 in %s", opDeployment, time.Since(began).Round(100*time.Millisecond))

	ok := t.Run("user Deployment and ChaosPod", func(t *testing.T) { userWorkloads(ctx, t, cs, dyn) })
	ok = ok && t.Run("helm upgrade under Pod creation", func(t *testing.T) { helmUpgrade(ctx, t, c, cs) })
	ok = ok && t.Run("helm uninstall keeps the CRD", func(t *testing.T) { helmUninstall(ctx, t, c, cs, dyn) })
	if !ok {
		t.FailNow()
	}
}

// helmUpgrade: helm upgrade with another log level rolls the operator's
// Pods (maxUnavailable 0) while Pods are being created, and the webhooks
// answer throughout and after.
func helmUpgrade(ctx context.Context, t *testing.T, c *node.Cluster, cs kubernetes.Interface) {
	underPodCreation(ctx, t, c, cs, "helm upgrade --set logLevel=debug", func() error {
		_, err := c.Helm(ctx, "upgrade", chartRelease, "dist/chart", "--namespace", opNamespace, "--reuse-values", "--set", "logLevel=debug")
		return err
	})
	dep, err := cs.AppsV1().Deployments(opNamespace).Get(ctx, opDeployment, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if args := dep.Spec.Template.Spec.Containers[0].Args; !slices.Contains(args, "--zap-log-level=debug") {
		t.Errorf("after helm upgrade the operator runs with %v, want --zap-log-level=debug among them", args)
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "after-upgrade", Namespace: userNS},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{pauseContainer()}, TerminationGracePeriodSeconds: ptr.To[int64](1)},
	}
	admitted, err := cs.CoreV1().Pods(userNS).Create(ctx, pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	if err != nil {
		t.Fatalf("a Pod after the upgrade: %v", err)
	}
	if admitted.Annotations["example-mutating-admission-webhook"] != "foo" {
		t.Errorf("a Pod after the upgrade is not annotated by the webhook: %v", admitted.Annotations)
	}
}

// helmUninstall: once the user's ChaosPods are gone (as before make
// undeploy), helm uninstall removes every object the chart installed and
// the operator's Pods, and keeps the CRD. What the operator wrote itself
// stays in its namespace, which Helm does not delete: its leader Lease and
// its self-mode Secret (no owner reference can tie them to the release:
// the policies pin them). Deleting the namespace and the CRD, the user's
// last step, removes them.
func helmUninstall(ctx context.Context, t *testing.T, c *node.Cluster, cs kubernetes.Interface, dyn dynamic.Interface) {
	if err := dyn.Resource(chaosv1.GroupVersionResource).Namespace(userNS).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	if !eventually(ctx, time.Minute, 250*time.Millisecond, func() bool {
		pods, err := cs.CoreV1().Pods(userNS).List(ctx, metav1.ListOptions{LabelSelector: "app=chaos"})
		return err == nil && len(pods.Items) == 0
	}) {
		t.Fatalf("the ChaosPod's Pod outlived the ChaosPod by a minute%s", podSummary(ctx, cs, userNS))
	}
	began := time.Now()
	if _, err := c.Helm(ctx, "uninstall", chartRelease, "--namespace", opNamespace, "--wait", "--timeout", "2m"); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"customresourcedefinition.apiextensions.k8s.io/chaospods.chaosapps.metamagical.io",
		"lease.coordination.k8s.io/" + opLease,
		"secret/" + certSecret,
	}
	kinds := "customresourcedefinitions,clusterroles,clusterrolebindings,mutatingwebhookconfigurations,validatingwebhookconfigurations,validatingadmissionpolicies,validatingadmissionpolicybindings,priorityclasses"
	namespaced := "deployments,replicasets,pods,services,serviceaccounts,roles,rolebindings,poddisruptionbudgets,secrets,leases"
	var left []string
	if !eventually(ctx, 2*time.Minute, 500*time.Millisecond, func() bool {
		cluster, err := c.Kubectl(ctx, "get", kinds, "-o", "name")
		if err != nil {
			left = []string{err.Error()}
			return false
		}
		inNamespace, err := c.Kubectl(ctx, "get", namespaced, "-n", opNamespace, "-o", "name")
		if err != nil {
			left = []string{err.Error()}
			return false
		}
		left = nil
		for _, name := range strings.Fields(cluster + "\n" + inNamespace) {
			if strings.Contains(name, "hexagonal-operator") || strings.Contains(name, "chaosapps") || strings.HasPrefix(name, "pod/") {
				left = append(left, name)
			}
		}
		slices.Sort(left)
		return slices.Equal(left, want)
	}) {
		t.Fatalf("after helm uninstall: %s left, want %s", strings.Join(left, ", "), strings.Join(want, ", "))
	}
	t.Logf("figure: helm uninstall → the chart's objects and the operator's Pods gone, the CRD kept, in %s", time.Since(began).Round(100*time.Millisecond))

	if _, err := c.Kubectl(ctx, "delete", "namespace", opNamespace, "--wait=true", "--timeout=2m"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Kubectl(ctx, "delete", "customresourcedefinition", "chaospods.chaosapps.metamagical.io", "--wait=true", "--timeout=2m"); err != nil {
		t.Fatal(err)
	}
}
