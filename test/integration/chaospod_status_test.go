package integration_test

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	chaosv1 "github.com/hexagonal-operator/operator/api/chaos/v1"
	"github.com/hexagonal-operator/operator/test/controlplane"
)

// readyOf is the Ready condition of the ChaosPod name as c reads it, and
// the object's generation; ok is false while there is none.
func readyOf(t *testing.T, c dynamic.ResourceInterface, name string) (cond map[string]any, generation int64, ok bool) {
	t.Helper()
	obj, err := c.Get(context.Background(), name, metav1.GetOptions{})
	require.NoError(t, err)
	conds, _, err := unstructured.NestedSlice(obj.Object, "status", "conditions")
	require.NoError(t, err)
	for _, c := range conds {
		m, isMap := c.(map[string]any)
		if isMap && m["type"] == chaosv1.ConditionReady {
			return m, obj.GetGeneration(), true
		}
	}
	return nil, obj.GetGeneration(), false
}

// waitReady waits until name's Ready condition has status and reason for
// the object's current generation, and returns it.
func waitReady(t *testing.T, c dynamic.ResourceInterface, name, status, reason string) map[string]any {
	t.Helper()
	var last map[string]any
	require.Eventually(t, func() bool {
		cond, gen, ok := readyOf(t, c, name)
		last = cond
		return ok && cond["status"] == status && cond["reason"] == reason && cond["observedGeneration"] == gen
	}, 60*time.Second, 50*time.Millisecond, "Ready of %s never became %s/%s for its generation (last %v)", name, status, reason, last)
	return last
}

func TestChaosPodReadyIsKeptForEveryGenerationInBothVersions(t *testing.T) {
	t.Parallel()
	e := startChaos(t, controlplane.Options{})
	ctx := context.Background()
	require.NoError(t, e.cp.EnsureNamespace(ctx, "ready"))

	_, err := e.v2("ready").Create(ctx, chaosPodV2("runs", map[string]any{"interval": "10m"}), metav1.CreateOptions{})
	require.NoError(t, err)
	// No scheduler, no kubelet: the Pod is Pending, and Ready says so.
	pending := waitReady(t, e.v2("ready"), "runs", "False", chaosv1.ReasonPodPending)
	assert.Equal(t, "Pod runs is Pending: not scheduled to a node yet", pending["message"])
	// Its status says it runs, as a kubelet would write it.
	setPodRunning(t, e.cs, "ready", "runs")
	cond := waitReady(t, e.v2("ready"), "runs", "True", chaosv1.ReasonPodRunning)
	obj, err := e.v2("ready").Get(ctx, "runs", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Contains(t, cond["message"], nested(t, obj, "spec", "stop", "at"), "the message says until when")
	assert.NotEmpty(t, cond["lastTransitionTime"])
	v1cond, _, ok := readyOf(t, e.v1("ready"), "runs")
	require.True(t, ok)
	assert.Equal(t, cond, v1cond, "v1 reads the same condition")

	// kubectl shows it.
	kubectl, err := controlplane.Binary("kubectl")
	require.NoError(t, err)
	out, err := exec.Command(kubectl, "--kubeconfig", e.cp.KubeconfigPath, "get", "chaos", "runs", "-n", "ready", "--no-headers").CombinedOutput()
	require.NoError(t, err, string(out))
	assert.Equal(t, []string{"runs", "True"}, strings.Fields(string(out))[:2], string(out))

	// A user's edit makes a new generation; Ready is stated for it.
	err = updateChaosPod(ctx, e.v2("ready"), "runs", func(o *unstructured.Unstructured) error {
		return unstructured.SetNestedField(o.Object, "edited", "spec", "podTemplate", "metadata", "labels", "edit")
	})
	require.NoError(t, err)
	edited := waitReady(t, e.v2("ready"), "runs", "True", chaosv1.ReasonPodRunning)
	assert.Greater(t, edited["observedGeneration"], cond["observedGeneration"])
	assert.Equal(t, cond["lastTransitionTime"], edited["lastTransitionTime"], "still True: no transition")
}

// An admission policy that refuses the ChaosPod's Pod: Ready is False with
// the policy's message, a Warning Event carries it, and once the policy
// goes the Pod is created and Ready turns True.
func TestChaosPodRefusedPodIsReportedWithTheAPIServersReason(t *testing.T) {
	t.Parallel()
	e := startChaos(t, controlplane.Options{})
	ctx := context.Background()
	require.NoError(t, e.cp.EnsureNamespace(ctx, "refused"))
	const because = "chaos pods are not welcome in this namespace"
	policies := e.cs.AdmissionregistrationV1()
	_, err := policies.ValidatingAdmissionPolicies().Create(ctx, &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "no-pods"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionregistrationv1.Fail),
			MatchConstraints: &admissionregistrationv1.MatchResources{
				NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: "refused"}},
				ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
					Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}},
				}}},
			},
			Validations: []admissionregistrationv1.Validation{{Expression: "false", Message: because}},
		},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = policies.ValidatingAdmissionPolicyBindings().Create(ctx, &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "no-pods"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        "no-pods",
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
		},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	e.waitPodCreates(t, "refused", false)

	_, err = e.v1("refused").Create(ctx, chaosPodV1("chaos", nil), metav1.CreateOptions{})
	require.NoError(t, err)
	cond := waitReady(t, e.v1("refused"), "chaos", "False", chaosv1.ReasonPodCreateFailed)
	assert.Contains(t, cond["message"], because)
	v2cond, _, ok := readyOf(t, e.v2("refused"), "chaos")
	require.True(t, ok)
	assert.Equal(t, cond, v2cond, "v2 reads the same condition")

	var warning *eventsv1.Event
	require.Eventually(t, func() bool {
		events, err := e.cs.EventsV1().Events("refused").List(ctx, metav1.ListOptions{})
		require.NoError(t, err)
		for i, ev := range events.Items {
			if ev.Reason == chaosv1.ReasonPodCreateFailed {
				warning = &events.Items[i]
				return true
			}
		}
		return false
	}, 30*time.Second, 50*time.Millisecond, "no PodCreateFailed Event")
	assert.Equal(t, corev1.EventTypeWarning, warning.Type)
	assert.Contains(t, warning.Note, because)
	assert.Equal(t, chaosv1.Kind, warning.Regarding.Kind)
	assert.Equal(t, "chaos", warning.Regarding.Name)
	_, err = e.cs.CoreV1().Pods("refused").Get(ctx, "chaos", metav1.GetOptions{})
	assert.True(t, apierrors.IsNotFound(err), "a Pod exists: %v", err)

	// The policy goes; a touch of the ChaosPod brings the retry at once
	// rather than after its back-off.
	require.NoError(t, policies.ValidatingAdmissionPolicyBindings().Delete(ctx, "no-pods", metav1.DeleteOptions{}))
	e.waitPodCreates(t, "refused", true)
	_, err = e.v1("refused").Patch(ctx, "chaos", types.MergePatchType, []byte(`{"metadata":{"annotations":{"touched":"yes"}}}`), metav1.PatchOptions{})
	require.NoError(t, err)
	waitReady(t, e.v1("refused"), "chaos", "False", chaosv1.ReasonPodPending)
	_, err = e.cs.CoreV1().Pods("refused").Get(ctx, "chaos", metav1.GetOptions{})
	assert.NoError(t, err)
}

// setPodRunning writes the status of the Pod ns/name as a kubelet does
// once its containers run and are ready, through the status subresource.
func setPodRunning(t *testing.T, cs kubernetes.Interface, ns, name string) {
	t.Helper()
	require.NoError(t, retry.RetryOnConflict(retry.DefaultRetry, func() error {
		pod, err := cs.CoreV1().Pods(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		now := metav1.Now()
		pod.Status.Phase = corev1.PodRunning
		pod.Status.Conditions = []corev1.PodCondition{
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
		}
		pod.Status.ContainerStatuses = []corev1.ContainerStatus{{
			Name: pod.Spec.Containers[0].Name, Image: pod.Spec.Containers[0].Image, Ready: true,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}},
		}}
		_, err = cs.CoreV1().Pods(ns).UpdateStatus(context.Background(), pod, metav1.UpdateOptions{})
		return err
	}))
}

// waitPodCreates waits until the API server admits (or refuses) a Pod
// create in ns, dry run: admission policies take effect a moment after
// they are written.
func (e *chaosEnv) waitPodCreates(t *testing.T, ns string, admitted bool) {
	t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "probe", Namespace: ns},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "pause", Image: "registry.k8s.io/pause:3.10"}}},
	}
	var last error
	require.Eventually(t, func() bool {
		_, err := e.cs.CoreV1().Pods(ns).Create(context.Background(), pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		last = err
		if admitted {
			return err == nil
		}
		return err != nil && strings.Contains(err.Error(), "ValidatingAdmissionPolicy")
	}, 30*time.Second, 50*time.Millisecond, "pod creates in %s never became admitted=%v (last: %v)", ns, admitted, last)
}
