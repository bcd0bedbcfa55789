package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupName is the API group of ChaosPods.
const GroupName = "chaosapps.metamagical.io"

// Names of the ChaosPod resource, as the CRD spells them.
const (
	Kind      = "ChaosPod"
	Resource  = "chaospods"
	ShortName = "chaos"
)

// SchemeGroupVersion is this package's group and version.
var SchemeGroupVersion = schema.GroupVersion{Group: GroupName, Version: "v1"}

// GroupKind is the group and kind of ChaosPods, in every version.
var GroupKind = schema.GroupKind{Group: GroupName, Kind: Kind}

// GroupVersionResource is the ChaosPod resource at this version.
var GroupVersionResource = SchemeGroupVersion.WithResource(Resource)

// The builder is local to this package: registration goes only into schemes
// handed to AddToScheme.
var schemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

// AddToScheme registers ChaosPod and ChaosPodList at v1 into scheme.
func AddToScheme(scheme *runtime.Scheme) error {
	return schemeBuilder.AddToScheme(scheme)
}

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(SchemeGroupVersion, &ChaosPod{}, &ChaosPodList{})
	metav1.AddToGroupVersion(scheme, SchemeGroupVersion)
	return nil
}
