package cache

import (
	"context"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/hexagonal-operator/operator/internal/ports"
)

var podsResource = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

// IndexControllerOwner indexes Pods by their controller owner reference,
// under the values of [ControllerOwnerKey].
//
// The value names the owner (group, kind, namespace, name) rather than
// holding its UID so that a reconciler can look up an owner's Pods from a
// request alone, before or without reading the owner. The version is left
// out because an owner reference may name any served version of its kind.
const IndexControllerOwner = "controller-owner"

// ControllerOwnerKey is the [IndexControllerOwner] value of the Pods that
// the object owner of kind gk controls: "<group>/<kind>/<namespace>/<name>",
// for example "apps/ReplicaSet/default/web-7d4b9" (the core group is empty).
func ControllerOwnerKey(gk schema.GroupKind, owner types.NamespacedName) string {
	return strings.Join([]string{gk.Group, gk.Kind, owner.Namespace, owner.Name}, "/")
}

// indexByControllerOwner never fails: the store panics on an index error,
// and an object it cannot read simply has no controller.
func indexByControllerOwner(obj any) ([]string, error) {
	o, ok := obj.(metav1.Object)
	if !ok {
		return nil, nil
	}
	ref := metav1.GetControllerOfNoCopy(o)
	if ref == nil {
		return nil, nil
	}
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return nil, nil
	}
	gk := schema.GroupKind{Group: gv.Group, Kind: ref.Kind}
	return []string{ControllerOwnerKey(gk, types.NamespacedName{Namespace: o.GetNamespace(), Name: ref.Name})}, nil
}

// Pods returns the change notifications of Pods, as metadata only
// (*metav1.PartialObjectMetadata). Adding a handler asks for the Pod
// informer.
func (c *Cache) Pods() ports.Source { return &source{cache: c, kind: KindPod, build: c.newPodInformer} }

// newPodInformer lists and watches Pods' metadata through the metadata
// client, which asks the server for *metav1.PartialObjectMetadata(List)
// only, indexed by controller owner.
func (c *Cache) newPodInformer() toolscache.SharedIndexInformer {
	lw := listWatch(c.meta.Resource(podsResource).Namespace(c.namespace))
	return newInformer(c.logger, KindPod, lw, c.meta, &metav1.PartialObjectMetadata{},
		toolscache.Indexers{IndexControllerOwner: indexByControllerOwner})
}

// ListControlledPods implements ports.PodMetadataLister from the
// [IndexControllerOwner] index, sorted by name, waiting for the Pod
// informer to sync first (at most until ctx is done). The objects are
// shared with the cache: do not mutate them.
func (c *Cache) ListControlledPods(ctx context.Context, owner schema.GroupKind, key types.NamespacedName) ([]*metav1.PartialObjectMetadata, error) {
	inf, err := c.syncedInformer(ctx, KindPod, c.newPodInformer)
	if err != nil {
		return nil, fmt.Errorf("list pods of %s %s from cache: %w", owner, key, err)
	}
	objs, err := inf.GetIndexer().ByIndex(IndexControllerOwner, ControllerOwnerKey(owner, key))
	if err != nil {
		return nil, fmt.Errorf("list pods of %s %s from cache: %w", owner, key, err)
	}
	pods := make([]*metav1.PartialObjectMetadata, 0, len(objs))
	for _, obj := range objs {
		if p, ok := obj.(*metav1.PartialObjectMetadata); ok {
			pods = append(pods, p)
		}
	}
	slices.SortFunc(pods, func(a, b *metav1.PartialObjectMetadata) int { return strings.Compare(a.Name, b.Name) })
	return pods, nil
}
