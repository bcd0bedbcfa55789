package chaospod_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/hexagonal-operator/operator/internal/domain/chaospod"
)

// TrimPod keeps what the reconciler reads (TestReadyIsThePodAsAUserReadsIt
// reads only trimmed Pods) and nothing else.
func TestTrimPodKeepsWhatTheReconcilerReads(t *testing.T) {
	t.Parallel()
	created := metav1.NewTime(time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC))
	deleted := metav1.NewTime(created.Add(time.Minute))
	owners := chaospod.PodFor(chaosPod("")).OwnerReferences
	terminated := &corev1.ContainerStateTerminated{Reason: "Error", ExitCode: 1, Message: "a long termination log", StartedAt: created, ContainerID: "containerd://1"}
	full := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: "chaos", Namespace: "ns", UID: "uid", ResourceVersion: "7", Generation: 2,
			CreationTimestamp: created, DeletionTimestamp: &deleted, DeletionGracePeriodSeconds: new(int64(30)),
			Labels:          map[string]string{chaospod.PodLabel: "chaos", "app": "chaos"},
			Annotations:     map[string]string{"kubectl.kubernetes.io/last-applied-configuration": "{…}"},
			OwnerReferences: owners, Finalizers: []string{"example.com/hold"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubelet"}},
		},
		Spec: corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{Name: "c", Image: "busybox", Command: []string{"sleep", "1d"}}}},
		Status: corev1.PodStatus{
			Phase: corev1.PodRunning, Reason: "r", Message: "m", HostIP: "10.0.0.1", PodIP: "10.1.0.1", StartTime: &created, QOSClass: corev1.PodQOSBestEffort,
			Conditions: []corev1.PodCondition{
				{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: created},
				{Type: corev1.PodInitialized, Status: corev1.ConditionTrue},
				{Type: corev1.ContainersReady, Status: corev1.ConditionFalse},
				{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "ContainersNotReady", Message: "containers with unready status: [c]", LastProbeTime: created},
			},
			InitContainerStatuses: []corev1.ContainerStatus{{Name: "setup", Image: "busybox", ImageID: "sha256:1", State: corev1.ContainerState{Terminated: terminated}}},
			ContainerStatuses: []corev1.ContainerStatus{{
				Name: "c", Image: "busybox", ImageID: "sha256:1", ContainerID: "containerd://2", RestartCount: 3, Started: new(false),
				State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off 40s"}},
				LastTerminationState: corev1.ContainerState{Terminated: terminated},
			}},
			EphemeralContainerStatuses: []corev1.ContainerStatus{{Name: "debug"}},
		},
	}

	pod := full.DeepCopy()
	chaospod.TrimPod(pod)

	want := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: "chaos", Namespace: "ns", UID: "uid", ResourceVersion: "7",
			CreationTimestamp: created, DeletionTimestamp: &deleted,
			Labels:          map[string]string{chaospod.PodLabel: "chaos"},
			OwnerReferences: owners,
		},
		Status: corev1.PodStatus{
			Phase: corev1.PodRunning, Reason: "r", Message: "m",
			Conditions: []corev1.PodCondition{
				{Type: corev1.PodScheduled, Status: corev1.ConditionTrue},
				{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "ContainersNotReady", Message: "containers with unready status: [c]"},
			},
			InitContainerStatuses: []corev1.ContainerStatus{{Name: "setup", State: corev1.ContainerState{
				Terminated: &corev1.ContainerStateTerminated{Reason: "Error", ExitCode: 1, Message: "a long termination log"},
			}}},
			ContainerStatuses: []corev1.ContainerStatus{{
				Name: "c", RestartCount: 3,
				State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off 40s"}},
				LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Error", ExitCode: 1}},
			}},
		},
	}
	assert.Equal(t, want, pod)

	again := pod.DeepCopy()
	chaospod.TrimPod(again)
	assert.Equal(t, pod, again, "trimming twice changes nothing more")

	bare := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "other", Labels: map[string]string{"app": "x"}}}
	chaospod.TrimPod(bare)
	assert.Nil(t, bare.Labels, "no label but the operator's")
}

// The selector the reconciler's Pods are cached by selects every Pod
// PodFor makes, whatever the template's labels, and no other.
func TestPodSelectorSelectsTheOperatorsPods(t *testing.T) {
	t.Parallel()
	sel := chaospod.PodSelector()
	assert.Equal(t, "chaosapps.metamagical.io/chaospod", sel.String())
	for _, tmpl := range []map[string]string{nil, {"app": "web"}, {chaospod.PodLabel: "another"}} {
		cp := chaosPod("")
		cp.Spec.Template.Labels = tmpl
		assert.True(t, sel.Matches(labels.Set(chaospod.PodFor(cp).Labels)), "template labels %v", tmpl)
	}
	assert.False(t, sel.Matches(labels.Set{"app": "web"}))
	assert.False(t, sel.Matches(labels.Set{}))
}
