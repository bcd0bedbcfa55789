package events

import (
	"context"
	"sync/atomic"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	clientevents "k8s.io/client-go/tools/events"
)

// boundedSink lets at most cap(slots) Event writes reach the API server at
// once, and counts the writes waiting or running so that Stop can wait for
// them.
type boundedSink struct {
	inner   clientevents.EventSink
	slots   chan struct{}
	pending atomic.Int64
}

var _ clientevents.EventSink = (*boundedSink)(nil)

func newBoundedSink(inner clientevents.EventSink, n int) *boundedSink {
	return &boundedSink{inner: inner, slots: make(chan struct{}, n)}
}

func (s *boundedSink) Create(ctx context.Context, e *eventsv1.Event) (*eventsv1.Event, error) {
	return do(ctx, s, func() (*eventsv1.Event, error) { return s.inner.Create(ctx, e) })
}

func (s *boundedSink) Update(ctx context.Context, e *eventsv1.Event) (*eventsv1.Event, error) {
	return do(ctx, s, func() (*eventsv1.Event, error) { return s.inner.Update(ctx, e) })
}

func (s *boundedSink) Patch(ctx context.Context, old *eventsv1.Event, data []byte) (*eventsv1.Event, error) {
	return do(ctx, s, func() (*eventsv1.Event, error) { return s.inner.Patch(ctx, old, data) })
}

func do(ctx context.Context, s *boundedSink, write func() (*eventsv1.Event, error)) (*eventsv1.Event, error) {
	s.pending.Add(1)
	defer s.pending.Add(-1)
	select {
	case s.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-s.slots }()
	return write()
}

// idleFor is how long the sink must have nothing pending to count as
// drained: the broadcaster hands each Event to a goroutine of its own,
// which reaches the sink a moment after the broadcaster has let go of it.
const idleFor = 50 * time.Millisecond

// waitIdle returns once nothing has been pending for idleFor, or when ctx
// ends.
func (s *boundedSink) waitIdle(ctx context.Context) {
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	var idleSince time.Time
	for {
		if s.pending.Load() > 0 {
			idleSince = time.Time{}
		} else if idleSince.IsZero() {
			idleSince = time.Now()
		} else if time.Since(idleSince) >= idleFor {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
