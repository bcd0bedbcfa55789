package metrics

import (
	"sync"
	"time"
)

// ttlCache remembers values for a while, holding at most max of them, so a
// scraper presenting the same token every few seconds costs one TokenReview
// and one SubjectAccessReview a minute instead of two requests per scrape.
type ttlCache[V any] struct {
	now func() time.Time
	max int

	mu    sync.Mutex // guards items
	items map[string]ttlEntry[V]
}

type ttlEntry[V any] struct {
	value   V
	expires time.Time
}

func newTTLCache[V any](maxItems int, now func() time.Time) *ttlCache[V] {
	return &ttlCache[V]{now: now, max: maxItems, items: map[string]ttlEntry[V]{}}
}

func (c *ttlCache[V]) get(key string) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.items[key]
	if !ok {
		var zero V
		return zero, false
	}
	if !c.now().Before(e.expires) {
		delete(c.items, key)
		var zero V
		return zero, false
	}
	return e.value, true
}

func (c *ttlCache[V]) put(key string, v V, ttl time.Duration) {
	if ttl <= 0 || c.max <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	if _, ok := c.items[key]; !ok && len(c.items) >= c.max {
		for k, e := range c.items {
			if !now.Before(e.expires) {
				delete(c.items, k)
			}
		}
		// Still full of live entries: drop one at random (map order), which
		// is good enough to bound memory against a flood of fresh tokens.
		for k := range c.items {
			if len(c.items) < c.max {
				break
			}
			delete(c.items, k)
		}
	}
	c.items[key] = ttlEntry[V]{value: v, expires: now.Add(ttl)}
}

func (c *ttlCache[V]) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.items)
}
