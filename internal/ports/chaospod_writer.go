package ports

import (
	"context"

	chaosv1 "github.com/hexagonal-operator/operator/api/chaos/v1"
)

// ChaosPodWriter knows how to write a ChaosPod's spec and, separately, its
// status (the status subresource).
//
// Both writes are optimistic: they carry the object's resourceVersion and
// fail with [ErrConflict] when someone else wrote meanwhile, so no edit is
// silently overwritten; the caller re-reads and tries again. A missing
// ChaosPod is [ErrNotFound]. Each returns the object as stored. The
// argument is not modified.
type ChaosPodWriter interface {
	// UpdateChaosPod writes metadata and spec; status is ignored.
	UpdateChaosPod(ctx context.Context, obj *chaosv1.ChaosPod) (*chaosv1.ChaosPod, error)
	// UpdateChaosPodStatus writes status only.
	UpdateChaosPodStatus(ctx context.Context, obj *chaosv1.ChaosPod) (*chaosv1.ChaosPod, error)
}
