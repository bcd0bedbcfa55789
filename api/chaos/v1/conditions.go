package v1

// ConditionReady is the type of the condition in status.conditions that
// says whether the ChaosPod's Pod runs its course.
const ConditionReady = "Ready"

// Reasons of the Ready condition. kubectl and alerts match on them, so they
// are API: they may be added to, never renamed.
const (
	// ReasonPodRunning (True): the Pod exists and is stopped at
	// spec.nextStop, which the message names.
	ReasonPodRunning = "PodRunning"
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
