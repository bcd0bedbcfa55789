package metrics

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

type fakeNow struct {
	mu sync.Mutex
	t  time.Time
}

func (f *fakeNow) now() time.Time { f.mu.Lock(); defer f.mu.Unlock(); return f.t }
func (f *fakeNow) add(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.t = f.t.Add(d)
}

func TestTTLCache(t *testing.T) {
	t.Parallel()
	clock := &fakeNow{t: time.Now()}
	c := newTTLCache[int](3, clock.now)
	c.put("a", 1, time.Minute)
	c.put("b", 2, time.Second)
	v, ok := c.get("a")
	assert.True(t, ok)
	assert.Equal(t, 1, v)

	clock.add(2 * time.Second)
	_, ok = c.get("b")
	assert.False(t, ok, "expired entry served")

	for i, k := range []string{"c", "d", "e", "f"} {
		c.put(k, i, time.Minute)
	}
	assert.LessOrEqual(t, c.len(), 3, "cache grew past its bound")
	v, ok = c.get("f")
	assert.True(t, ok, "newest entry evicted")
	assert.Equal(t, 3, v)
}
