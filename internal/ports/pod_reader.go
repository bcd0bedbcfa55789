package ports

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// PodReader knows how to read one Pod by namespace and name, metadata only,
// typically from a cache.
//
// The returned object may be shared with the cache: callers must not mutate
// it. A missing Pod is reported as [ErrNotFound].
type PodReader interface {
	GetPod(ctx context.Context, key types.NamespacedName) (*metav1.PartialObjectMetadata, error)
}
