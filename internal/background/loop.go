package background

import (
	"context"
	"fmt"
	"sync"
)

// Loop is one background goroutine. The zero value is ready to use.
type Loop struct {
	mu     sync.Mutex
	cancel context.CancelFunc
	done   chan struct{}
}

// Start runs run in a goroutine whose context ends at Stop, not with the
// caller's; what names the loop in errors. It fails when started already.
func (l *Loop) Start(what string, run func(context.Context)) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.done != nil {
		return fmt.Errorf("%s: already started", what)
	}
	ctx, cancel := context.WithCancel(context.Background())
	l.cancel, l.done = cancel, make(chan struct{})
	go func(done chan struct{}) {
		defer close(done)
		run(ctx)
	}(l.done)
	return nil
}

// Stop ends the loop's context and waits for run to return, or for ctx to
// end. Stop before Start is a no-op.
func (l *Loop) Stop(ctx context.Context, what string) error {
	l.mu.Lock()
	cancel, done := l.cancel, l.done
	l.mu.Unlock()
	if done == nil {
		return nil
	}
	cancel()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("%s: stop: %w", what, ctx.Err())
	}
}
