package memory_test

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/hexagonal-operator/operator/internal/adapters/memory"
)

func TestClock(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	c := memory.NewClock(start)
	assert.Equal(t, start, c.Now())
	assert.Equal(t, start, c.Now(), "the clock moved by itself")

	assert.Equal(t, start.Add(90*time.Second), c.Advance(90*time.Second))
	assert.Equal(t, start.Add(90*time.Second), c.Now())
}

func TestClockConcurrentUse(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := memory.NewClock(start)
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			c.Advance(time.Second)
			_ = c.Now()
		})
	}
	wg.Wait()
	assert.Equal(t, start.Add(10*time.Second), c.Now())
}
