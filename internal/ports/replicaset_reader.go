package ports

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/types"
)

// ReplicaSetReader knows how to read a ReplicaSet, typically from a cache.
//
// The returned object may be shared with the cache: callers must not mutate
// it (DeepCopy first). A missing ReplicaSet is reported as [ErrNotFound].
type ReplicaSetReader interface {
	GetReplicaSet(ctx context.Context, key types.NamespacedName) (*appsv1.ReplicaSet, error)
}
