package ports

import (
	"context"

	"k8s.io/apimachinery/pkg/types"
)

// ReplicaSetLabeler knows how to set labels on a ReplicaSet without touching
// anything else on it.
//
// Implementations must patch, not update: labels (and other fields) written
// concurrently by someone else survive. A missing ReplicaSet is reported as
// [ErrNotFound].
type ReplicaSetLabeler interface {
	SetReplicaSetLabels(ctx context.Context, key types.NamespacedName, labels map[string]string) error
}
