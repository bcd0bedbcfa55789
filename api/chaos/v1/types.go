package v1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// StopIntervalAnnotation keeps v2's spec.stop.interval on a v1 object, which
// has no field for it, so that a v2→v1→v2 round trip loses nothing. The
// reconciler reads it too: it is how long each Pod lives.
const StopIntervalAnnotation = GroupName + "/stop-interval"

// ChaosPodSpec is the desired state of a ChaosPod.
type ChaosPodSpec struct {
	// Template is the Pod to run; the Pod is named like the ChaosPod.
	// +kubebuilder:validation:Required
	Template corev1.PodTemplateSpec `json:"template"`

	// NextStop is when the current Pod is deleted (it is re-created on the
	// next reconcile).
	// +optional
	NextStop *metav1.Time `json:"nextStop,omitempty"`
}

// ChaosPodStatus is the observed state of a ChaosPod.
type ChaosPodStatus struct {
	// LastRun is the creation time of the most recent Pod.
	// +optional
	LastRun *metav1.Time `json:"lastRun,omitempty"`

	// Conditions hold Ready: True while the Pod runs and is ready, False
	// with a reason that says why not (see the Reason constants of package
	// v1). Each carries the generation it was computed for.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// ChaosPod runs a Pod and stops it at spec.nextStop, again and again.
//
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=chaos
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].status"
// +kubebuilder:printcolumn:name="Next Stop",type="string",format="date-time",JSONPath=".spec.nextStop"
// +kubebuilder:printcolumn:name="Last Run",type="string",format="date-time",JSONPath=".status.lastRun"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type ChaosPod struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ChaosPodSpec   `json:"spec"`
	Status ChaosPodStatus `json:"status,omitempty"`
}

// ChaosPodList is a list of ChaosPods.
//
// +kubebuilder:object:root=true
type ChaosPodList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ChaosPod `json:"items"`
}
