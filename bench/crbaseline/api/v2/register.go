package v2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	chaosv1 "github.com/hexagonal-operator/operator/bench/crbaseline/api/v1"
)

// SchemeGroupVersion is this package's group and version.
var SchemeGroupVersion = schema.GroupVersion{Group: chaosv1.GroupName, Version: "v2"}

// GroupVersionResource is the ChaosPod resource at this version.
var GroupVersionResource = SchemeGroupVersion.WithResource(chaosv1.Resource)

// The builder is local to this package: registration goes only into schemes
// handed to AddToScheme.
var schemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

// AddToScheme registers ChaosPod and ChaosPodList at v2 into scheme.
func AddToScheme(scheme *runtime.Scheme) error {
	return schemeBuilder.AddToScheme(scheme)
}

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(SchemeGroupVersion, &ChaosPod{}, &ChaosPodList{})
	metav1.AddToGroupVersion(scheme, SchemeGroupVersion)
	return nil
}
