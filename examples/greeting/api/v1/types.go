package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// GreetingSpec is the desired state of a Greeting.
type GreetingSpec struct {
	// Name is who is greeted: 1 to 63 characters.
	// +kubebuilder:validation:Required
	Name string `json:"name"`

	// Salutation is how they are greeted, at most 32 characters; the
	// defaulting webhook sets "Hello" when it is empty.
	// +optional
	Salutation string `json:"salutation,omitempty"`
}

// GreetingStatus is the observed state of a Greeting.
type GreetingStatus struct {
	// Message is the greeting: "<salutation>, <name>!".
	// +optional
	Message string `json:"message,omitempty"`

	// ObservedGeneration is the generation of the spec that Message was
	// written for.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// Greeting greets someone: the controller writes the greeting into its
// status.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Message",type="string",JSONPath=".status.message"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type Greeting struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   GreetingSpec   `json:"spec"`
	Status GreetingStatus `json:"status,omitempty"`
}

// GreetingList is a list of Greetings.
//
// +kubebuilder:object:root=true
type GreetingList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Greeting `json:"items"`
}
