package cache

import "github.com/prometheus/client_golang/prometheus"

var objectsDesc = prometheus.NewDesc(
	"operator_cache_objects",
	"Number of objects held in the operator's informer caches.",
	[]string{"kind"}, nil,
)

// objectsCollector counts the stores at scrape time.
type objectsCollector struct{ c *Cache }

func (o objectsCollector) Describe(ch chan<- *prometheus.Desc) { ch <- objectsDesc }

func (o objectsCollector) Collect(ch chan<- prometheus.Metric) {
	o.c.mu.Lock()
	counts := make(map[string]int, len(o.c.informers))
	for kind, inf := range o.c.informers {
		counts[kind] = len(inf.GetStore().ListKeys())
	}
	o.c.mu.Unlock()
	for kind, n := range counts {
		ch <- prometheus.MustNewConstMetric(objectsDesc, prometheus.GaugeValue, float64(n), kind)
	}
}
