package e2e_test

import (
	"context"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	chaosv1 "github.com/hexagonal-operator/operator/api/chaos/v1"
	"github.com/hexagonal-operator/operator/internal/domain/chaospod"
	"github.com/hexagonal-operator/operator/test/controlplane"
	"github.com/hexagonal-operator/operator/test/operatorproc"
)

const (
	operatorPodWebhook = "operator-pod-validator.hexagonal-operator.io"
	operatorPodDenied  = "the operator may only create Pods of an existing ChaosPod: "
)

// forgedPod is a Pod as the operator would create it for the ChaosPod
// name of uid in ns: labeled with the name and controlled by that ChaosPod
// only, so that the Pod policies let it through when no ChaosPod of ns is
// named like it.
func forgedPod(ns, name string, uid types.UID) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: ns, Name: name,
			Labels: map[string]string{chaospod.PodLabel: name},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: chaosv1.SchemeGroupVersion.String(), Kind: chaosv1.Kind, Name: name, UID: uid, Controller: ptr.To(true),
			}},
		},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "pause", Image: "registry.k8s.io/pause:3.10"}}},
	}
}

// requireRefusedByWebhook fails unless err is the operator's Pod
// validator's denial holding message.
func requireRefusedByWebhook(t *testing.T, err error, message string) {
	t.Helper()
	require.Error(t, err)
	assert.True(t, apierrors.IsForbidden(err), "%v", err)
	assert.Contains(t, err.Error(), `admission webhook "`+operatorPodWebhook+`" denied the request`)
	assert.Contains(t, err.Error(), operatorPodDenied+message)
}

// The gap no admission policy closes: in a namespace that holds a
// ChaosPod, the operator's identity creating a Pod for a ChaosPod that does
// not exist (or exists elsewhere, or with another UID). The operator's Pod
// validator, deployed as config/default does and answered by the binary
// running as its ServiceAccount, refuses each, while the operator's own
// Pods are created and nobody else's Pod is refused, even while no replica
// answers.
func TestOperatorCreatesOnlyPodsOfExistingChaosPods(t *testing.T) {
	t.Parallel()
	cp := controlplane.StartT(t, controlplane.Options{})
	ctx := context.Background()
	admin := cp.Clientset()
	require.NoError(t, cp.Apply(ctx, rbacOf(t)...))
	saCfg, err := cp.ServiceAccountConfig(ctx, operatorNamespace, operatorServiceAccount)
	require.NoError(t, err)
	operator, err := kubernetes.NewForConfig(saCfg)
	require.NoError(t, err)

	ports := operatorproc.FreePorts(t, 3)
	certDir := t.TempDir()
	_, err = cp.IssueServingCert(certDir)
	require.NoError(t, err)
	server := controlplane.WebhookServer{Host: "127.0.0.1:" + strconv.Itoa(ports[0]), CABundle: cp.CACert()}
	_, err = cp.InstallCRDs(ctx, repoPath(t, "config", "crd"), &server)
	require.NoError(t, err)
	_, err = cp.InstallWebhooks(ctx, repoPath(t, "config", "default"), server)
	require.NoError(t, err)
	p := startDeployedLike(t, nil, writeKubeconfig(t, saCfg), ports, "--webhook-cert-mode=external", "--webhook-cert-dir="+certDir)

	dyn, err := dynamic.NewForConfig(cp.Config)
	require.NoError(t, err)
	const ns, other = "apps", "other"
	for _, n := range []string{ns, other} {
		require.NoError(t, cp.EnsureNamespace(ctx, n))
	}
	dryRun := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
	createAsOperator := func(pod *corev1.Pod) error {
		_, err := operator.CoreV1().Pods(pod.Namespace).Create(ctx, pod, dryRun)
		return err
	}
	// The ChaosPods come once the API server has resolved the template
	// policy's param kind: before that the policy refuses the operator's
	// Pods (the fail-closed window of docs/reliability.md), which this
	// test is not about.
	require.Eventually(t, func() bool {
		err := createAsOperator(forgedPod(metav1.NamespaceSystem, "probe", "0d0f3c5e-7a1b-4c1e-9f00-000000000000"))
		return err != nil && !strings.Contains(err.Error(), "failed to find resource referenced by paramKind")
	}, 90*time.Second, 200*time.Millisecond, "the API server resolved the ChaosPod kind for the template policy")
	chaosPods := dyn.Resource(chaosv1.GroupVersionResource)
	victim, err := chaosPods.Namespace(ns).Create(ctx, chaosPodV1("victim"), metav1.CreateOptions{})
	require.NoError(t, err)
	elsewhere, err := chaosPods.Namespace(other).Create(ctx, chaosPodV1("elsewhere"), metav1.CreateOptions{})
	require.NoError(t, err)
	// One in a namespace every Pod webhook leaves out, this one too: the
	// policies alone check the operator's Pod there.
	public, err := chaosPods.Namespace(metav1.NamespacePublic).Create(ctx, chaosPodV1("public"), metav1.CreateOptions{})
	require.NoError(t, err)

	// The operator's own Pods, through the webhook and the policies (once
	// the API server has resolved the ChaosPod kind for them).
	for _, c := range []*unstructured.Unstructured{victim, elsewhere, public} {
		require.Eventually(t, func() bool {
			pod, err := admin.CoreV1().Pods(c.GetNamespace()).Get(ctx, c.GetName(), metav1.GetOptions{})
			return err == nil && metav1.IsControlledBy(pod, c)
		}, 90*time.Second, 200*time.Millisecond, "the operator created the Pod of ChaosPod %s/%s", c.GetNamespace(), c.GetName())
	}

	t.Run("a ChaosPod that does not exist", func(t *testing.T) {
		requireRefusedByWebhook(t, createAsOperator(forgedPod(ns, "ghost", "0d0f3c5e-7a1b-4c1e-9f00-000000000001")),
			"ChaosPod apps/ghost does not exist")
	})
	t.Run("a ChaosPod of another namespace", func(t *testing.T) {
		requireRefusedByWebhook(t, createAsOperator(forgedPod(ns, "elsewhere", elsewhere.GetUID())),
			"ChaosPod apps/elsewhere does not exist")
	})
	t.Run("anyone else's Pod", func(t *testing.T) {
		// The same Pod, by the admin: the webhook is not called for it.
		created, err := admin.CoreV1().Pods(ns).Create(ctx, forgedPod(ns, "ghost", "0d0f3c5e-7a1b-4c1e-9f00-000000000002"), metav1.CreateOptions{})
		require.NoError(t, err)
		assert.Equal(t, "ghost", created.Name)
	})
	t.Run("a wrong UID", func(t *testing.T) {
		// chaospod-templates refuses it first; without that policy the
		// webhook refuses it on its own.
		wrong := forgedPod(ns, "victim", "0d0f3c5e-7a1b-4c1e-9f00-000000000003")
		requireDenied(t, createAsOperator(wrong), templatePolicy, "")
		require.NoError(t, admin.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Delete(ctx, templatePolicy, metav1.DeleteOptions{}))
		var err error
		require.Eventually(t, func() bool {
			err = createAsOperator(wrong)
			return err != nil && strings.Contains(err.Error(), operatorPodWebhook)
		}, 30*time.Second, 200*time.Millisecond, "the policy's binding is gone: %v", err)
		requireRefusedByWebhook(t, err, "ChaosPod apps/victim has UID "+string(victim.GetUID())+
			", the Pod's owner reference names "+string(wrong.OwnerReferences[0].UID))
	})

	// While no replica answers, the operator's own Pod creates fail
	// (closed) and are retried; the namespaces every Pod webhook leaves
	// out keep taking anyone's Pods.
	require.NoError(t, p.Signal(syscall.SIGTERM))
	require.Equal(t, 0, p.Wait(t, 20*time.Second))
	err = createAsOperator(forgedPod(ns, "victim", victim.GetUID()))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "failed calling webhook")
	_, err = admin.CoreV1().Pods(metav1.NamespacePublic).Create(ctx,
		forgedPod(metav1.NamespacePublic, "ghost", "0d0f3c5e-7a1b-4c1e-9f00-000000000004"), metav1.CreateOptions{})
	require.NoError(t, err, "anyone else's Pod in a namespace the webhooks leave out is created")
}
