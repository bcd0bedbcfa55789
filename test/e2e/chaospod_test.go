package e2e_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	chaosv1 "github.com/hexagonal-operator/operator/api/chaos/v1"
	"github.com/hexagonal-operator/operator/test/controlplane"
)

// READY in `kubectl get chaos` is the Pod as a user reads it: False with
// PodPending while the Pod waits (the control plane has no scheduler and
// no kubelet), True with PodRunning once its status says it runs and is
// ready, False with PodImagePullFailed or PodCrashLooping while a
// container cannot start (each status written as a kubelet would, through
// the status subresource), and the Pod, whatever it says, is still
// stopped at spec.nextStop. The binary runs as its ServiceAccount under
// config/default's RBAC and admission policies, which allow each reason
// it writes.
func TestChaosPodReadyIsThePodsState(t *testing.T) {
	t.Parallel()
	cp := controlplane.StartT(t, controlplane.Options{})
	ctx := context.Background()
	admin := cp.Clientset()
	require.NoError(t, cp.Apply(ctx, rbacOf(t)...))
	saCfg, err := cp.ServiceAccountConfig(ctx, operatorNamespace, operatorServiceAccount)
	require.NoError(t, err)
	operator, err := kubernetes.NewForConfig(saCfg)
	require.NoError(t, err)
	ports, certDir, _ := externalServing(t, cp)
	startDeployedLike(t, nil, writeKubeconfig(t, saCfg), ports,
		"--controllers=chaospod", "--webhook-cert-mode=external", "--webhook-cert-dir="+certDir)
	// The template policy refuses the operator's Pods until the API server
	// has resolved its param kind; the reconciler would retry, with
	// back-off, but this test is not about that window.
	require.Eventually(t, func() bool {
		_, err := operator.CoreV1().Pods(metav1.NamespaceSystem).Create(ctx, forgedPod(metav1.NamespaceSystem, "probe", "0d0f3c5e-7a1b-4c1e-9f00-000000000000"),
			metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err != nil && !strings.Contains(err.Error(), "failed to find resource referenced by paramKind")
	}, 90*time.Second, 200*time.Millisecond, "the API server resolved the ChaosPod kind for the template policy")

	const ns, name = "apps", "runs"
	require.NoError(t, cp.EnsureNamespace(ctx, ns))
	dyn, err := dynamic.NewForConfig(cp.Config)
	require.NoError(t, err)
	chaosPods := dyn.Resource(chaosv1.GroupVersionResource).Namespace(ns)
	obj := chaosPodV1(name)
	obj.SetAnnotations(map[string]string{chaosv1.StopIntervalAnnotation: "1h"})
	_, err = chaosPods.Create(ctx, obj, metav1.CreateOptions{})
	require.NoError(t, err)

	// waitReady waits until kubectl shows READY and the condition has
	// reason, and returns the condition's message.
	waitReady := func(ready, reason string) string {
		t.Helper()
		var message, last string
		require.Eventually(t, func() bool {
			o, err := chaosPods.Get(ctx, name, metav1.GetOptions{})
			require.NoError(t, err)
			conds, _, _ := unstructured.NestedSlice(o.Object, "status", "conditions")
			for _, c := range conds {
				if m, ok := c.(map[string]any); ok && m["type"] == chaosv1.ConditionReady {
					last = m["status"].(string) + "/" + m["reason"].(string) + ": " + m["message"].(string)
					message, _ = m["message"].(string)
					if m["status"] != ready || m["reason"] != reason || m["observedGeneration"] != o.GetGeneration() {
						return false
					}
				}
			}
			return strings.HasPrefix(last, ready+"/")
		}, 60*time.Second, 100*time.Millisecond, "Ready never became %s/%s (last %s)", ready, reason, last)
		fields := strings.Fields(kubectl(t, cp, "get", "chaos", name, "-n", ns, "--no-headers"))
		require.GreaterOrEqual(t, len(fields), 2)
		assert.Equal(t, ready, fields[1], "kubectl's READY")
		return message
	}
	pods := admin.CoreV1().Pods(ns)
	setStatus := func(status corev1.PodStatus) {
		t.Helper()
		require.NoError(t, retry.RetryOnConflict(retry.DefaultRetry, func() error {
			pod, err := pods.Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			pod.Status = status
			_, err = pods.UpdateStatus(ctx, pod, metav1.UpdateOptions{})
			return err
		}))
	}
	now := metav1.Now()
	scheduled := corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now}
	notReady := corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionFalse, LastTransitionTime: now,
		Reason: "ContainersNotReady", Message: "containers with unready status: [pause]"}
	waiting := func(reason, message string, restarts int32) []corev1.ContainerStatus {
		return []corev1.ContainerStatus{{Name: "pause", Image: "registry.k8s.io/pause:3.10", RestartCount: restarts,
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: message}}}}
	}

	assert.Equal(t, "Pod runs is Pending: not scheduled to a node yet", waitReady("False", chaosv1.ReasonPodPending))
	first, err := pods.Get(ctx, name, metav1.GetOptions{})
	require.NoError(t, err)

	setStatus(corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{scheduled, notReady},
		ContainerStatuses: waiting("ImagePullBackOff", `Back-off pulling image "registry.k8s.io/pause:3.10"`, 0)})
	assert.Contains(t, waitReady("False", chaosv1.ReasonPodImagePullFailed),
		`Pod runs cannot pull the image of container pause: ImagePullBackOff: Back-off pulling image "registry.k8s.io/pause:3.10"`)

	setStatus(corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{scheduled,
		{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now}},
		ContainerStatuses: []corev1.ContainerStatus{{Name: "pause", Image: "registry.k8s.io/pause:3.10", Ready: true,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}}}})
	assert.Contains(t, waitReady("True", chaosv1.ReasonPodRunning), "Pod runs runs until ")

	crashing := waiting("CrashLoopBackOff", "back-off 40s restarting failed container=pause", 3)
	crashing[0].LastTerminationState.Terminated = &corev1.ContainerStateTerminated{Reason: "Error", ExitCode: 1, StartedAt: now, FinishedAt: now}
	setStatus(corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{scheduled, notReady}, ContainerStatuses: crashing})
	assert.Contains(t, waitReady("False", chaosv1.ReasonPodCrashLooping),
		"Pod runs: container pause is in CrashLoopBackOff (3 restarts, last exit Error (code 1)): back-off 40s")

	// A user moves the stop close: the crash-looping Pod is stopped then,
	// and the next one is Pending.
	stop := time.Now().Add(3 * time.Second).UTC().Truncate(time.Second).Format(time.RFC3339)
	_, err = chaosPods.Patch(ctx, name, types.MergePatchType, []byte(`{"spec":{"nextStop":"`+stop+`"}}`), metav1.PatchOptions{})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		pod, err := pods.Get(ctx, name, metav1.GetOptions{})
		return err == nil && pod.UID != first.UID
	}, 60*time.Second, 100*time.Millisecond, "the crash-looping Pod was not replaced at its stop")
	waitReady("False", chaosv1.ReasonPodPending)
}
