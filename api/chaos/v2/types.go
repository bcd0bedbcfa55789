package v2

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Bounds of spec.stop.interval. The CRD schema checks them too, but the
// validating webhook is the authority and gives the documented message.
const (
	MinStopInterval     = "1s"
	MaxStopInterval     = "24h"
	DefaultStopInterval = "10s"
)

// ChaosPodStop says when and how often the Pod is stopped.
type ChaosPodStop struct {
	// At is when the current Pod is deleted (v1: spec.nextStop).
	// +optional
	At *metav1.Time `json:"at,omitempty"`

	// Interval is how long each Pod lives, written like 3s or 1m30s,
	// between 1s and 24h. The defaulting webhook writes 10s when unset.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1s') && duration(self) <= duration('24h')",message="must be between 1s and 24h"
	Interval *metav1.Duration `json:"interval,omitempty"`
}

// ChaosPodSpec is the desired state of a ChaosPod.
type ChaosPodSpec struct {
	// PodTemplate is the Pod to run (v1: spec.template).
	// +kubebuilder:validation:Required
	PodTemplate corev1.PodTemplateSpec `json:"podTemplate"`

	// Stop says when the Pod is stopped.
	// +optional
	Stop ChaosPodStop `json:"stop,omitempty"`
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

// ChaosPod runs a Pod and stops it at spec.stop.at, again and again.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=chaos
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].status"
// +kubebuilder:printcolumn:name="Next Stop",type="string",format="date-time",JSONPath=".spec.stop.at"
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
