package cache

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/hexagonal-operator/operator/internal/ports"
)

var _ ports.PodReader = (*Cache)(nil)

// GetPod implements ports.PodReader from the metadata-only Pod informer,
// waiting for it to sync first (at most until ctx is done). The object is
// shared with the cache: do not mutate it.
func (c *Cache) GetPod(ctx context.Context, key types.NamespacedName) (*metav1.PartialObjectMetadata, error) {
	inf, err := c.syncedInformer(ctx, KindPod, c.newPodInformer)
	if err != nil {
		return nil, fmt.Errorf("read pod %s from cache: %w", key, err)
	}
	obj, ok, err := inf.GetIndexer().GetByKey(key.String())
	if err != nil {
		return nil, fmt.Errorf("read pod %s from cache: %w", key, err)
	}
	if !ok {
		return nil, fmt.Errorf("pod %s: %w", key, ports.ErrNotFound)
	}
	p, ok := obj.(*metav1.PartialObjectMetadata)
	if !ok {
		return nil, fmt.Errorf("read pod %s from cache: unexpected %T", key, obj)
	}
	return p, nil
}
