package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupName is the API group of Greetings.
const GroupName = "greetings.example.hexagonal-operator.io"

// Kind is the kind of a Greeting, as the CRD spells it.
const Kind = "Greeting"

// SchemeGroupVersion is this package's group and version.
var SchemeGroupVersion = schema.GroupVersion{Group: GroupName, Version: "v1"}

// GroupKind is the group and kind of Greetings.
var GroupKind = schema.GroupKind{Group: GroupName, Kind: Kind}

// Resource is where the API server serves Greetings at this version.
var Resource = SchemeGroupVersion.WithResource("greetings")

// The builder is local to this package: registration goes only into schemes
// handed to AddToScheme.
var schemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

// AddToScheme registers Greeting and GreetingList at v1 into scheme.
func AddToScheme(scheme *runtime.Scheme) error {
	return schemeBuilder.AddToScheme(scheme)
}

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(SchemeGroupVersion, &Greeting{}, &GreetingList{})
	metav1.AddToGroupVersion(scheme, SchemeGroupVersion)
	return nil
}
