package cache

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	appslisters "k8s.io/client-go/listers/apps/v1"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/hexagonal-operator/operator/internal/ports"
)

// ReplicaSets returns the change notifications of ReplicaSets. Adding a
// handler asks for the ReplicaSet informer.
func (c *Cache) ReplicaSets() ports.Source {
	return &source{cache: c, kind: KindReplicaSet, build: c.newReplicaSetInformer}
}

// newReplicaSetInformer lists and watches typed ReplicaSets through the
// typed client, in protobuf on a real server.
func (c *Cache) newReplicaSetInformer() toolscache.SharedIndexInformer {
	lw := listWatch(c.client.AppsV1().ReplicaSets(c.namespace))
	return newInformer(c.logger, KindReplicaSet, lw, c.client, &appsv1.ReplicaSet{}, nil)
}

// GetReplicaSet returns the cached ReplicaSet key, waiting for the
// ReplicaSet informer to sync first (at most until ctx is done). The object
// is shared with the cache: do not mutate it. A ReplicaSet that does not
// exist, or lives outside Options.Namespace, is ports.ErrNotFound.
func (c *Cache) GetReplicaSet(ctx context.Context, key types.NamespacedName) (*appsv1.ReplicaSet, error) {
	inf, err := c.syncedInformer(ctx, KindReplicaSet, c.newReplicaSetInformer)
	if err != nil {
		return nil, fmt.Errorf("read replicaset %s from cache: %w", key, err)
	}
	rs, err := appslisters.NewReplicaSetLister(inf.GetIndexer()).ReplicaSets(key.Namespace).Get(key.Name)
	if apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("replicaset %s: %w", key, ports.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("read replicaset %s from cache: %w", key, err)
	}
	return rs, nil
}
