package e2e_test

import (
	"context"
	"net/http"
	"slices"
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
)

const (
	operatorPodWebhook = "operator-pod-validator.hexagonal-operator.io"
	// operatorPodRefused is the validator's one answer for a Pod whose
	// ChaosPod is missing, has another UID or is being deleted: it tells
	// no client which it was.
	operatorPodRefused = "the operator may only create Pods of an existing ChaosPod: " +
		"the Pod's controller must be a ChaosPod of its namespace with the name and UID its owner reference gives, not being deleted"
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
// validator's denial, in the words that say nothing of which ChaosPods
// exist: no UID (secrets lists those the ChaosPods have) and no word of
// existence.
func requireRefusedByWebhook(t *testing.T, err error, secrets ...types.UID) {
	t.Helper()
	require.Error(t, err)
	assert.True(t, apierrors.IsForbidden(err), "%v", err)
	assert.Contains(t, err.Error(), `admission webhook "`+operatorPodWebhook+`" denied the request: `+operatorPodRefused)
	for _, uid := range secrets {
		assert.NotContains(t, err.Error(), string(uid), "the denial tells a ChaosPod's UID")
	}
	assert.NotContains(t, err.Error(), "does not exist")
}

// The gap no admission policy closes: in a namespace that holds a
// ChaosPod, the operator's identity creating a Pod for a ChaosPod that does
// not exist (or exists elsewhere, with another UID, or was deleted a
// moment ago). The operator's Pod validator, deployed as config/default
// does and answered by the binary running as its ServiceAccount, refuses
// each, in every namespace (kube-system and the operator's own too), in
// words that say nothing of which ChaosPods exist, reading the ChaosPod
// from the API server; the operator's own Pods are created and nobody
// else's Pod is refused, even while no replica answers.
func TestOperatorCreatesOnlyPodsOfExistingChaosPods(t *testing.T) {
	t.Parallel()
	// The audit log shows whence the validator read a ChaosPod. The
	// ServiceAccount admission plugin on, as in a cluster: the operator's
	// Pods run as the ServiceAccount it names.
	cp := controlplane.StartT(t, controlplane.Options{AuditPolicy: controlplane.DefaultAuditPolicy, APIServerFlags: []string{"--disable-admission-plugins="}})
	ctx := context.Background()
	admin := cp.Clientset()
	require.NoError(t, cp.Apply(ctx, rbacOf(t)...))
	saCfg, err := cp.ServiceAccountConfig(ctx, operatorNamespace, operatorServiceAccount)
	require.NoError(t, err)
	operator, err := kubernetes.NewForConfig(saCfg)
	require.NoError(t, err)

	ports, certDir, server := externalServing(t, cp)
	_, err = cp.InstallWebhooks(ctx, repoPath(t, "config", "default"), server)
	require.NoError(t, err)
	p := startDeployedLike(t, nil, writeKubeconfig(t, saCfg), ports, "--webhook-cert-mode=external", "--webhook-cert-dir="+certDir)

	dyn, err := dynamic.NewForConfig(cp.Config)
	require.NoError(t, err)
	const ns, other = "apps", "other"
	for _, n := range []string{ns, other} {
		require.NoError(t, cp.EnsureNamespace(ctx, n))
	}
	// The ServiceAccounts the admission plugin looks for (no controller
	// makes them here).
	for _, n := range []string{ns, other, metav1.NamespacePublic, metav1.NamespaceSystem, operatorNamespace} {
		_, err := admin.CoreV1().ServiceAccounts(n).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	_, err = admin.CoreV1().ServiceAccounts(metav1.NamespaceSystem).Create(ctx,
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "generic-garbage-collector"}}, metav1.CreateOptions{})
	require.NoError(t, err)
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
	// One in each namespace the user-facing Pod webhooks leave out: the
	// operator's Pod validator leaves none out, so in these too a Pod for
	// a ChaosPod that does not exist is refused while the namespace holds
	// another (where chaospod-templates lets it pass).
	public, err := chaosPods.Namespace(metav1.NamespacePublic).Create(ctx, chaosPodV1("public"), metav1.CreateOptions{})
	require.NoError(t, err)
	system, err := chaosPods.Namespace(metav1.NamespaceSystem).Create(ctx, chaosPodV1("system"), metav1.CreateOptions{})
	require.NoError(t, err)
	// The operator's namespace enforces the restricted Pod Security
	// Standard.
	restricted := chaosPodV1("own")
	require.NoError(t, unstructured.SetNestedField(restricted.Object, map[string]any{
		"runAsNonRoot": true, "seccompProfile": map[string]any{"type": "RuntimeDefault"},
	}, "spec", "template", "spec", "securityContext"))
	require.NoError(t, unstructured.SetNestedSlice(restricted.Object, []any{map[string]any{
		"name": "pause", "image": "registry.k8s.io/pause:3.10", "securityContext": map[string]any{
			"allowPrivilegeEscalation": false, "capabilities": map[string]any{"drop": []any{"ALL"}},
		},
	}}, "spec", "template", "spec", "containers"))
	own, err := chaosPods.Namespace(operatorNamespace).Create(ctx, restricted, metav1.CreateOptions{})
	require.NoError(t, err)
	brief, err := chaosPods.Namespace(ns).Create(ctx, chaosPodV1("brief"), metav1.CreateOptions{})
	require.NoError(t, err)
	uids := []types.UID{victim.GetUID(), elsewhere.GetUID(), public.GetUID(), system.GetUID(), own.GetUID(), brief.GetUID()}

	// The operator's own Pods, through the webhook and the policies (once
	// the API server has resolved the ChaosPod kind for them).
	for _, c := range []*unstructured.Unstructured{victim, elsewhere, public, system, own, brief} {
		require.Eventually(t, func() bool {
			pod, err := admin.CoreV1().Pods(c.GetNamespace()).Get(ctx, c.GetName(), metav1.GetOptions{})
			return err == nil && metav1.IsControlledBy(pod, c)
		}, 90*time.Second, 200*time.Millisecond, "the operator created the Pod of ChaosPod %s/%s", c.GetNamespace(), c.GetName())
	}

	t.Run("a ChaosPod that does not exist", func(t *testing.T) {
		requireRefusedByWebhook(t, createAsOperator(forgedPod(ns, "ghost", "0d0f3c5e-7a1b-4c1e-9f00-000000000001")), uids...)
	})
	t.Run("a ChaosPod that does not exist, in kube-system", func(t *testing.T) {
		// As any ServiceAccount of kube-system, were it admitted.
		pod := forgedPod(metav1.NamespaceSystem, "ghost", "0d0f3c5e-7a1b-4c1e-9f00-000000000005")
		pod.Spec.ServiceAccountName = "generic-garbage-collector"
		requireRefusedByWebhook(t, createAsOperator(pod), uids...)
	})
	t.Run("a ChaosPod that does not exist, in the operator's namespace", func(t *testing.T) {
		// Restricted, as the namespace enforces before any webhook.
		pod := forgedPod(operatorNamespace, "ghost", "0d0f3c5e-7a1b-4c1e-9f00-000000000006")
		pod.Spec.SecurityContext = &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}}
		pod.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{
			AllowPrivilegeEscalation: ptr.To(false), Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		}
		requireRefusedByWebhook(t, createAsOperator(pod), uids...)
	})
	t.Run("a ChaosPod of another namespace", func(t *testing.T) {
		requireRefusedByWebhook(t, createAsOperator(forgedPod(ns, "elsewhere", elsewhere.GetUID())), uids...)
	})
	t.Run("a ChaosPod deleted a moment ago", func(t *testing.T) {
		// The operator's caches saw it (they made its Pod); it goes, with
		// its Pod, and a Pod naming it comes at once. The validator asks
		// the API server, which no longer has it.
		require.NoError(t, chaosPods.Namespace(ns).Delete(ctx, "brief", metav1.DeleteOptions{}))
		require.NoError(t, admin.CoreV1().Pods(ns).Delete(ctx, "brief", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}))
		requireRefusedByWebhook(t, createAsOperator(forgedPod(ns, "brief", brief.GetUID())), uids...)
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			events, err := cp.AuditEvents()
			require.NoError(t, err)
			assert.True(c, slices.ContainsFunc(events, func(e controlplane.AuditEvent) bool {
				return e.User.Username == "system:serviceaccount:"+operatorNamespace+":"+operatorServiceAccount &&
					e.Verb == "get" && e.Stage == "ResponseComplete" && e.ObjectRef != nil &&
					e.ObjectRef.Resource == chaosv1.Resource && e.ObjectRef.Namespace == ns && e.ObjectRef.Name == "brief" &&
					e.ResponseStatus != nil && e.ResponseStatus.Code == http.StatusNotFound
			}), "the validator read ChaosPod %s/brief from the API server and found it gone", ns)
		}, 10*time.Second, 200*time.Millisecond)
	})
	t.Run("anyone else's Pod", func(t *testing.T) {
		// The same Pod, by the admin: the webhook is not called for it.
		created, err := admin.CoreV1().Pods(ns).Create(ctx, forgedPod(ns, "ghost", "0d0f3c5e-7a1b-4c1e-9f00-000000000002"), metav1.CreateOptions{})
		require.NoError(t, err)
		assert.Equal(t, "ghost", created.Name)
	})
	t.Run("a wrong UID", func(t *testing.T) {
		// chaospod-templates refuses it first; without that policy the
		// webhook refuses it on its own, in the same words as a ChaosPod
		// that does not exist.
		wrong := forgedPod(ns, "victim", "0d0f3c5e-7a1b-4c1e-9f00-000000000003")
		requireDenied(t, createAsOperator(wrong), templatePolicy, "")
		require.NoError(t, admin.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Delete(ctx, templatePolicy, metav1.DeleteOptions{}))
		var err error
		require.Eventually(t, func() bool {
			err = createAsOperator(wrong)
			return err != nil && strings.Contains(err.Error(), operatorPodWebhook)
		}, 30*time.Second, 200*time.Millisecond, "the policy's binding is gone: %v", err)
		requireRefusedByWebhook(t, err, uids...)
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
