package main

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/runtime"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// cacheObjectsDesc is the operator's operator_cache_objects, so that the
// benchmark driver reads how many objects each binary caches the same way
// from both.
var cacheObjectsDesc = prometheus.NewDesc(
	"operator_cache_objects",
	"Number of objects held in the operator's informer caches.",
	[]string{"kind", "selector"}, nil,
)

// cacheObjects counts the objects every informer of the manager's cache
// holds, at scrape time, as the operator's collector does. It learns the
// informers through cache.Options.NewInformer, which sees every one the
// cache creates (those a reconciler's read starts too), where asking the
// cache for a list of known types would miss them.
type cacheObjects struct {
	scheme *runtime.Scheme

	mu        sync.Mutex
	informers []countedInformer // guarded by mu
}

type countedInformer struct {
	kind     string
	informer toolscache.SharedIndexInformer
}

func newCacheObjects(scheme *runtime.Scheme) *cacheObjects {
	return &cacheObjects{scheme: scheme}
}

// newInformer is cache.Options.NewInformer: controller-runtime's own
// constructor (toolscache.NewSharedIndexInformer), remembering the result
// and its kind. exemplar is the object the informer was asked for: typed,
// or PartialObjectMetadata carrying its kind for a metadata-only one.
func (c *cacheObjects) newInformer(lw toolscache.ListerWatcher, exemplar runtime.Object, resync time.Duration, indexers toolscache.Indexers) toolscache.SharedIndexInformer {
	informer := toolscache.NewSharedIndexInformer(lw, exemplar, resync, indexers)
	kind := exemplar.GetObjectKind().GroupVersionKind().Kind
	if gvk, err := apiutil.GVKForObject(exemplar, c.scheme); err == nil {
		kind = gvk.Kind
	}
	c.mu.Lock()
	c.informers = append(c.informers, countedInformer{kind: kind, informer: informer})
	c.mu.Unlock()
	return informer
}

func (c *cacheObjects) Describe(ch chan<- *prometheus.Desc) { ch <- cacheObjectsDesc }

// Collect counts each store's keys, without copying any object. selector
// is always empty: no informer here is restricted to a label selector.
// Two informers of one kind (a typed and a metadata-only one) add up, so
// that a scrape never carries one series twice.
func (c *cacheObjects) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	informers := c.informers
	c.mu.Unlock()
	counts := make(map[string]int, len(informers))
	for _, inf := range informers {
		if inf.informer.IsStopped() {
			continue // removed from the cache
		}
		counts[inf.kind] += len(inf.informer.GetStore().ListKeys())
	}
	for kind, n := range counts {
		ch <- prometheus.MustNewConstMetric(cacheObjectsDesc, prometheus.GaugeValue, float64(n), kind, "")
	}
}
