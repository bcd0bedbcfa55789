package v1

// ConditionReady is the type of the condition in status.conditions that
// says whether the ChaosPod's Pod runs and is ready.
const ConditionReady = "Ready"

// Reasons of the Ready condition. kubectl and alerts match on them, so they
// are API: they may be added to, never renamed.
//
// Ready is the Pod as a user reads it: True only while it runs and is
// ready; while it is not, False with the reason, in the scheduler's or the
// kubelet's words in the message. The Pod is stopped at spec.nextStop
// whatever it says.
const (
	// ReasonPodRunning (True): the Pod runs and is ready (its Ready
	// condition is True); the message names spec.nextStop, when it is
	// stopped.
	ReasonPodRunning = "PodRunning"
	// ReasonPodPending (False): the Pod waits to be scheduled or for its
	// containers to start; the message gives the scheduler's or the
	// kubelet's reason when there is one.
	ReasonPodPending = "PodPending"
	// ReasonPodImagePullFailed (False): a container's image cannot be
	// pulled (ErrImagePull, ImagePullBackOff, InvalidImageName, …); the
	// message names the container and carries the kubelet's message.
	ReasonPodImagePullFailed = "PodImagePullFailed"
	// ReasonPodCrashLooping (False): a container keeps exiting and the
	// kubelet waits before restarting it (CrashLoopBackOff); the message
	// names the container and its restarts.
	ReasonPodCrashLooping = "PodCrashLooping"
	// ReasonPodNotReady (False): the Pod runs and is not ready, such as a
	// container failing its readiness probe, or its node is lost.
	ReasonPodNotReady = "PodNotReady"
	// ReasonPodFailed (False): the Pod has failed (a container exited in
	// error and is not restarted, or it was evicted); the next one starts
	// after spec.nextStop.
	ReasonPodFailed = "PodFailed"
	// ReasonPodSucceeded (False): every container of the Pod exited
	// successfully and none is restarted; the next one starts after
	// spec.nextStop.
	ReasonPodSucceeded = "PodSucceeded"
	// ReasonPodReplacing (False): the Pod was stopped and is terminating;
	// the next one is created once it is gone.
	ReasonPodReplacing = "PodReplacing"
	// ReasonPodCreateFailed (False): the API server refused to create the
	// Pod; the message carries its reason, as does a Warning Event.
	ReasonPodCreateFailed = "PodCreateFailed"
	// ReasonPodNotControlled (False): a Pod of the ChaosPod's name exists
	// and is not controlled by it, so none can be created.
	ReasonPodNotControlled = "PodNotControlled"
)
