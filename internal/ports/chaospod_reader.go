package ports

import (
	"context"

	"k8s.io/apimachinery/pkg/types"

	chaosv1 "github.com/hexagonal-operator/operator/api/chaos/v1"
)

// ChaosPodReader knows how to read a ChaosPod, at the v1 hub version,
// typically from a cache.
//
// The returned object may be shared with the cache: callers must not mutate
// it (DeepCopy first). A missing ChaosPod is reported as [ErrNotFound].
type ChaosPodReader interface {
	GetChaosPod(ctx context.Context, key types.NamespacedName) (*chaosv1.ChaosPod, error)
}
