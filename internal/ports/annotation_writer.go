package ports

import (
	"context"

	"k8s.io/apimachinery/pkg/types"
)

// AnnotationWriter knows how to set annotations on one object without
// touching anything else on it. Each writer is bound to one kind, chosen by
// the composition root, so the port names none.
//
// Implementations must patch, not update: annotations (and other fields)
// written concurrently by someone else survive, and only the given keys
// change. An empty map writes nothing. A missing object is reported as
// [ErrNotFound].
type AnnotationWriter interface {
	SetAnnotations(ctx context.Context, key types.NamespacedName, annotations map[string]string) error
}
