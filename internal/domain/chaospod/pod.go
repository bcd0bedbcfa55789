package chaospod

import (
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"

	chaosv1 "github.com/hexagonal-operator/operator/api/chaos/v1"
)

// PodSelector selects the Pods the operator creates for ChaosPods, by
// [PodLabel]: the reconciler reads no other Pod, so a cache of Pods for it
// need hold only these, not every Pod of the cluster.
func PodSelector() labels.Selector {
	req, err := labels.NewRequirement(PodLabel, selection.Exists, nil)
	if err != nil {
		panic(fmt.Sprintf("chaospod: label %q: %v", PodLabel, err)) // a constant key, checked by the tests
	}
	return labels.NewSelector().Add(*req)
}

// TrimPod keeps of pod, in place, what the reconciler reads and drops the
// rest (the spec, most of a Pod's size, every annotation and label but
// [PodLabel], and the status but what Ready is made of), so that a cache
// of Pods for it holds little more than their metadata. Running it twice
// changes nothing more.
func TrimPod(pod *corev1.Pod) {
	m := pod.ObjectMeta
	pod.ObjectMeta = metav1.ObjectMeta{
		Name:              m.Name,
		Namespace:         m.Namespace,
		UID:               m.UID,
		ResourceVersion:   m.ResourceVersion,
		CreationTimestamp: m.CreationTimestamp,
		DeletionTimestamp: m.DeletionTimestamp,
		OwnerReferences:   m.OwnerReferences,
	}
	if v, ok := m.Labels[PodLabel]; ok {
		pod.Labels = map[string]string{PodLabel: v}
	}
	pod.Spec = corev1.PodSpec{}
	st := pod.Status
	pod.Status = corev1.PodStatus{
		Phase:                 st.Phase,
		Reason:                st.Reason,
		Message:               st.Message,
		InitContainerStatuses: trimContainers(st.InitContainerStatuses),
		ContainerStatuses:     trimContainers(st.ContainerStatuses),
	}
	for _, c := range st.Conditions {
		if c.Type == corev1.PodReady || c.Type == corev1.PodScheduled {
			pod.Status.Conditions = append(pod.Status.Conditions, corev1.PodCondition{Type: c.Type, Status: c.Status, Reason: c.Reason, Message: c.Message})
		}
	}
}

// trimContainers keeps of each container status its name, restarts, and
// why it waits or why it ended (now and last time).
func trimContainers(in []corev1.ContainerStatus) []corev1.ContainerStatus {
	if len(in) == 0 {
		return nil
	}
	out := make([]corev1.ContainerStatus, len(in))
	for i, c := range in {
		out[i] = corev1.ContainerStatus{Name: c.Name, RestartCount: c.RestartCount, State: trimState(c.State, true)}
		if t := c.LastTerminationState.Terminated; t != nil {
			out[i].LastTerminationState = trimState(c.LastTerminationState, false)
		}
	}
	return out
}

// trimState keeps whether a container runs, and why it waits or ended;
// the message of an end only when withMessage (a termination message may
// be kilobytes).
func trimState(s corev1.ContainerState, withMessage bool) corev1.ContainerState {
	var out corev1.ContainerState
	if s.Waiting != nil {
		out.Waiting = &corev1.ContainerStateWaiting{Reason: s.Waiting.Reason, Message: s.Waiting.Message}
	}
	if s.Running != nil {
		out.Running = &corev1.ContainerStateRunning{}
	}
	if t := s.Terminated; t != nil {
		out.Terminated = &corev1.ContainerStateTerminated{Reason: t.Reason, ExitCode: t.ExitCode}
		if withMessage {
			out.Terminated.Message = t.Message
		}
	}
	return out
}

// imagePullReasons are the kubelet's reasons for a container waiting on
// its image.
var imagePullReasons = []string{"ErrImagePull", "ImagePullBackOff", "InvalidImageName", "ErrImageNeverPull", "ImageInspectError"}

// crashLoopBackOff is the kubelet's reason for a container waiting to be
// restarted after it exited again.
const crashLoopBackOff = "CrashLoopBackOff"

// podReady is the Ready condition cp shows for its Pod, which is stopped
// at stop: the Pod as `kubectl get pods` shows it. True only while it
// runs and is ready; otherwise False with what holds it, in the words of
// the scheduler or the kubelet.
func podReady(cp *chaosv1.ChaosPod, pod *corev1.Pod, stop time.Time) metav1.Condition {
	notReady := func(reason, format string, args ...any) metav1.Condition {
		return ready(cp, metav1.ConditionFalse, reason, fmt.Sprintf(format, args...))
	}
	after := stop.UTC().Format(time.RFC3339)
	st := &pod.Status
	switch st.Phase {
	case corev1.PodFailed:
		return notReady(chaosv1.ReasonPodFailed, "Pod %s failed%s; the next one starts after %s", pod.Name, colon(failure(pod)), after)
	case corev1.PodSucceeded:
		return notReady(chaosv1.ReasonPodSucceeded, "Pod %s has completed; the next one starts after %s", pod.Name, after)
	}
	if c, kind := waitingFor(pod, imagePullReasons...); c != nil {
		return notReady(chaosv1.ReasonPodImagePullFailed, "Pod %s cannot pull the image of %s %s: %s",
			pod.Name, kind, c.Name, reasonMessage(c.State.Waiting.Reason, c.State.Waiting.Message))
	}
	if c, kind := waitingFor(pod, crashLoopBackOff); c != nil {
		last := ""
		if t := c.LastTerminationState.Terminated; t != nil {
			last = fmt.Sprintf(", last exit %s (code %d)", orUnknown(t.Reason), t.ExitCode)
		}
		return notReady(chaosv1.ReasonPodCrashLooping, "Pod %s: %s %s is in %s (%d restarts%s)%s",
			pod.Name, kind, c.Name, crashLoopBackOff, c.RestartCount, last, colon(c.State.Waiting.Message))
	}
	switch st.Phase {
	case corev1.PodRunning:
		if c := condition(pod, corev1.PodReady); c != nil && c.Status == corev1.ConditionTrue {
			return running(cp, stop)
		}
		why := ""
		if c := condition(pod, corev1.PodReady); c != nil {
			why = reasonMessage(c.Reason, c.Message)
		}
		return notReady(chaosv1.ReasonPodNotReady, "Pod %s is Running and not ready%s", pod.Name, colon(why))
	case corev1.PodPending, "":
		return notReady(chaosv1.ReasonPodPending, "Pod %s is Pending: %s", pod.Name, pending(pod))
	}
	return notReady(chaosv1.ReasonPodNotReady, "Pod %s is %s%s", pod.Name, st.Phase, colon(reasonMessage(st.Reason, st.Message)))
}

// pending says what a Pending Pod waits for: the scheduler's reason, then
// the first container not yet started, then what the Pod's status says.
func pending(pod *corev1.Pod) string {
	scheduled := condition(pod, corev1.PodScheduled)
	if scheduled != nil && scheduled.Status == corev1.ConditionFalse {
		return "not scheduled: " + reasonMessage(scheduled.Reason, scheduled.Message)
	}
	for _, group := range []struct {
		kind     string
		statuses []corev1.ContainerStatus
	}{{"init container", pod.Status.InitContainerStatuses}, {"container", pod.Status.ContainerStatuses}} {
		for _, c := range group.statuses {
			switch s := c.State; {
			case s.Waiting != nil:
				return fmt.Sprintf("%s %s is waiting: %s", group.kind, c.Name, reasonMessage(s.Waiting.Reason, s.Waiting.Message))
			case s.Terminated != nil && s.Terminated.ExitCode != 0:
				return fmt.Sprintf("%s %s exited: %s (code %d)", group.kind, c.Name, orUnknown(s.Terminated.Reason), s.Terminated.ExitCode)
			case s.Running != nil && group.kind == "init container":
				return fmt.Sprintf("%s %s is running", group.kind, c.Name)
			}
		}
	}
	if why := reasonMessage(pod.Status.Reason, pod.Status.Message); why != "" {
		return why
	}
	if scheduled != nil && scheduled.Status == corev1.ConditionTrue {
		return "scheduled, its containers not started yet"
	}
	return "not scheduled to a node yet"
}

// failure says why a Failed Pod failed: the Pod's status (an eviction,
// say), else the first container that exited in error.
func failure(pod *corev1.Pod) string {
	if why := reasonMessage(pod.Status.Reason, pod.Status.Message); why != "" {
		return why
	}
	for _, c := range slices.Concat(pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses) {
		if t := c.State.Terminated; t != nil && t.ExitCode != 0 {
			return fmt.Sprintf("container %s exited: %s (code %d)%s", c.Name, orUnknown(t.Reason), t.ExitCode, colon(t.Message))
		}
	}
	return ""
}

// waitingFor is the first container (init containers first) waiting for
// one of reasons, and which kind of container it is.
func waitingFor(pod *corev1.Pod, reasons ...string) (*corev1.ContainerStatus, string) {
	for _, group := range []struct {
		kind     string
		statuses []corev1.ContainerStatus
	}{{"init container", pod.Status.InitContainerStatuses}, {"container", pod.Status.ContainerStatuses}} {
		for i, c := range group.statuses {
			if w := c.State.Waiting; w != nil && slices.Contains(reasons, w.Reason) {
				return &group.statuses[i], group.kind
			}
		}
	}
	return nil, ""
}

// condition is the Pod's condition of type t, nil when it has none.
func condition(pod *corev1.Pod, t corev1.PodConditionType) *corev1.PodCondition {
	for i, c := range pod.Status.Conditions {
		if c.Type == t {
			return &pod.Status.Conditions[i]
		}
	}
	return nil
}

// reasonMessage is "reason: message", or whichever of them is not empty.
func reasonMessage(reason, message string) string {
	return strings.Join(slices.DeleteFunc([]string{reason, strings.TrimSpace(message)}, func(s string) bool { return s == "" }), ": ")
}

// colon is ": s", or nothing when s is empty.
func colon(s string) string {
	if s == "" {
		return ""
	}
	return ": " + s
}

func orUnknown(reason string) string {
	if reason == "" {
		return "unknown reason"
	}
	return reason
}
