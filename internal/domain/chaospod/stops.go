package chaospod

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// MaxStartDelay bounds how long a start waits for the stops in flight (see
// stopGate). A stop ordinarily takes one API round trip, tens of
// milliseconds; one that takes longer holds no start back past this.
const MaxStartDelay = 500 * time.Millisecond

// stopGate lets stops go before starts. spec.nextStop has whole seconds,
// so the stops of Pods started in the same second fall due together, as a
// burst of DELETEs, each bringing its start (several times a DELETE's work)
// right behind it, which would make the burst's last stops late. A stop is
// promised for its time and a start is not, so a start, and the Event of a
// stop, first waits until no stop is in flight, for at most MaxStartDelay.
type stopGate struct {
	mu       sync.Mutex
	inFlight int
	// drained is closed when inFlight drops back to zero; nil while it is
	// zero.
	drained chan struct{}
}

// begin marks a stop in flight; end must follow.
func (g *stopGate) begin() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.inFlight == 0 {
		g.drained = make(chan struct{})
	}
	g.inFlight++
}

func (g *stopGate) end() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.inFlight--
	if g.inFlight == 0 {
		close(g.drained)
		g.drained = nil
	}
}

// wait returns once no stop is in flight or after limit, whichever comes
// first; an error only when ctx ends before.
func (g *stopGate) wait(ctx context.Context, limit time.Duration) error {
	g.mu.Lock()
	drained := g.drained
	g.mu.Unlock()
	if drained == nil {
		return nil
	}
	t := time.NewTimer(limit)
	defer t.Stop()
	select {
	case <-drained:
	case <-t.C:
	case <-ctx.Done():
		return fmt.Errorf("wait for the pod stops in flight: %w", ctx.Err())
	}
	return nil
}
