package memory

import (
	"sync"
	"time"

	"github.com/hexagonal-operator/operator/internal/ports"
)

// Clock is a ports.Clock that stands still until a test moves it.
type Clock struct {
	mu  sync.Mutex // guards now
	now time.Time
}

var _ ports.Clock = (*Clock)(nil)

// NewClock returns a clock stopped at now.
func NewClock(now time.Time) *Clock { return &Clock{now: now} }

// Now implements ports.Clock.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d and returns the new time.
func (c *Clock) Advance(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	return c.now
}
