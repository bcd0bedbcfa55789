package background_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hexagonal-operator/operator/internal/background"
)

func TestLoop(t *testing.T) {
	t.Parallel()
	var l background.Loop
	require.NoError(t, l.Stop(t.Context(), "loop"), "stop before start is a no-op")

	ended := make(chan struct{})
	require.NoError(t, l.Start("loop", func(ctx context.Context) {
		<-ctx.Done()
		close(ended)
	}))
	assert.ErrorContains(t, l.Start("loop", func(context.Context) {}), "loop: already started")
	select {
	case <-ended:
		t.Fatal("the loop ended before Stop")
	case <-time.After(10 * time.Millisecond):
	}
	require.NoError(t, l.Stop(t.Context(), "loop"))
	select {
	case <-ended:
	default:
		t.Fatal("Stop returned before the loop did")
	}
}

func TestLoopStopGivesUpWhenContextEnds(t *testing.T) {
	t.Parallel()
	var l background.Loop
	release := make(chan struct{})
	require.NoError(t, l.Start("stuck", func(context.Context) { <-release }))
	defer close(release)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	assert.ErrorIs(t, l.Stop(ctx, "stuck"), context.DeadlineExceeded)
}
