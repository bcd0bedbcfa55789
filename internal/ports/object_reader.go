package ports

import (
	"context"

	"k8s.io/apimachinery/pkg/types"
)

// ObjectReader knows how to read one object of a kind by namespace and name,
// typically from a cache. T is the kind's typed object, for example
// ObjectReader[*corev1.ConfigMap]: one port, and one adapter behind it,
// serve every kind, and the domain still reads typed fields instead of
// asserting types.
//
// The returned object may be shared with the cache: callers must not mutate
// it (DeepCopy first). A missing object is reported as [ErrNotFound]. For a
// cluster-scoped kind key.Namespace is empty.
type ObjectReader[T any] interface {
	GetObject(ctx context.Context, key types.NamespacedName) (T, error)
}
