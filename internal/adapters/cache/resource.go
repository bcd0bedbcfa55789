package cache

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/hexagonal-operator/operator/internal/ports"
)

// Object is a typed Kubernetes object, such as *corev1.ConfigMap: what a
// [Resource] holds.
type Object interface {
	metav1.Object
	runtime.Object
}

// Resource is the cache of one built-in resource, for a controller of a kind
// the cache has no methods of its own for: the kind's ports.Source and its
// ports.ObjectReader[T]. Build it with [NewResource].
//
// Its informer is the typed clientset's shared informer for the resource,
// so it shares everything with the rest of the cache: the namespace
// restriction, the managedFields stripping, laziness, readiness and
// operator_cache_objects, where the resource appears under its path (for
// example kind="v1/configmaps") rather than its kind.
type Resource[T Object] struct {
	// source serves AddEventHandler and HasApplied under the informer's
	// name in the cache, the resource's path; Kind is overridden.
	*source
	kind string
}

var (
	_ ports.Source                          = (*Resource[*corev1.ConfigMap])(nil)
	_ ports.ObjectReader[*corev1.ConfigMap] = (*Resource[*corev1.ConfigMap])(nil)
	_ ports.CacheFreshness                  = (*Resource[*corev1.ConfigMap])(nil)
)

// NewResource returns the cache of gvr, whose objects are of type T (for
// example NewResource[*corev1.ConfigMap](c, corev1.SchemeGroupVersion.WithResource("configmaps"))).
// It starts nothing: the informer exists once a handler is added or an
// object read, and a resource the typed clientset has no informer for fails
// then. ReplicaSets have their own methods ([Cache.ReplicaSets],
// [Cache.GetReplicaSet]), which share one informer with any other typed
// view of them, so they are refused here.
func NewResource[T Object](c *Cache, gvr schema.GroupVersionResource) (*Resource[T], error) {
	if c == nil {
		return nil, errors.New("cache resource: a cache is required")
	}
	if gvr.Version == "" || gvr.Resource == "" {
		return nil, fmt.Errorf("cache resource %q: version and resource are required", gvr.String())
	}
	if gvr == appsv1.SchemeGroupVersion.WithResource("replicasets") {
		return nil, errors.New("cache resource apps/v1/replicasets: use Cache.ReplicaSets and Cache.GetReplicaSet")
	}
	typ := reflect.TypeFor[T]()
	if typ.Kind() != reflect.Pointer || typ.Elem().Kind() != reflect.Struct {
		return nil, fmt.Errorf("cache resource %s: %s is not a pointer to an API type", resourceKey(gvr), typ)
	}
	// Built-in kinds are named after their Go types.
	return &Resource[T]{source: &source{cache: c, kind: resourceKey(gvr)}, kind: typ.Elem().Name()}, nil
}

// Kind implements ports.Source: the kind, for example "ConfigMap".
func (r *Resource[T]) Kind() string { return r.kind }

// GetObject implements ports.ObjectReader[T] from the resource's informer,
// waiting for it to sync first (at most until ctx is done). The object is
// shared with the cache: do not mutate it. An object that does not exist,
// or lives outside Options.Namespace, is ports.ErrNotFound.
func (r *Resource[T]) GetObject(ctx context.Context, key types.NamespacedName) (T, error) {
	var zero T
	what := strings.ToLower(r.kind)
	inf, err := r.cache.syncedInformer(ctx, r.source.kind)
	if err != nil {
		return zero, fmt.Errorf("read %s %s from cache: %w", what, key, err)
	}
	obj, ok, err := inf.GetIndexer().GetByKey(toolscache.ObjectName(key).String())
	if err != nil {
		return zero, fmt.Errorf("read %s %s from cache: %w", what, key, err)
	}
	if !ok {
		return zero, fmt.Errorf("%s %s: %w", what, key, ports.ErrNotFound)
	}
	t, ok := obj.(T)
	if !ok {
		return zero, fmt.Errorf("read %s %s from cache: the informer holds %T, not %T", what, key, obj, zero)
	}
	return t, nil
}

// resourceKey names a resource's informer by its path, group first: the
// name alone says which informer to build (see resourceInformer), so the
// cache keeps no registry of the resources asked for, and it cannot be
// mistaken for the kinds the cache serves itself, which have no slash.
func resourceKey(gvr schema.GroupVersionResource) string {
	return gvr.GroupVersion().String() + "/" + gvr.Resource
}

// resourceInformer is the informer of a key made by resourceKey, from the
// typed factory, which applies the cache's namespace and transform to it.
// It is called by Cache.informer, with the cache's lock held, for the keys
// it does not know.
func (c *Cache) resourceInformer(key string) (toolscache.SharedIndexInformer, error) {
	i := strings.LastIndex(key, "/")
	if i < 0 {
		return nil, fmt.Errorf("cache: unknown kind %q", key)
	}
	version, err := schema.ParseGroupVersion(key[:i])
	resource := key[i+1:]
	if err != nil || version.Version == "" || resource == "" {
		return nil, fmt.Errorf("cache: unknown kind %q", key)
	}
	generic, err := c.typed.ForResource(version.WithResource(resource))
	if err != nil {
		return nil, fmt.Errorf("cache: %s: %w", key, err)
	}
	return generic.Informer(), nil
}
