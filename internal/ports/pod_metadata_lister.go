package ports

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// PodMetadataLister knows how to list the Pods that an object controls,
// metadata only, typically from a cache index.
//
// A Pod is listed when its controller owner reference (the one with
// controller: true) names an object of kind owner called key.Name; owners
// are always in the Pod's namespace, key.Namespace. An owner without Pods,
// or one that does not exist, yields an empty list, not an error. The
// returned objects may be shared with the cache: callers must not mutate
// them.
type PodMetadataLister interface {
	ListControlledPods(ctx context.Context, owner schema.GroupKind, key types.NamespacedName) ([]*metav1.PartialObjectMetadata, error)
}
