package events

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The queue hands Events out oldest first, refuses one past QueueLength
// waiting, takes one again once another is handed, and lets go of its
// array once empty, so a burst's memory does not outlive it.
func TestWaitingIsABoundedFIFOThatEmptiesToNothing(t *testing.T) {
	t.Parallel()
	w := &waiting{ready: make(chan struct{}, 1)}

	for i := range QueueLength {
		require.True(t, w.push(&queued{note: string(rune('a' + i%26))}), "event %d", i)
	}
	assert.False(t, w.push(&queued{note: "past the bound"}), "one past QueueLength is refused")
	assert.Len(t, w.ready, 1, "the pump was told")

	first, ok := w.pop()
	require.True(t, ok)
	assert.Equal(t, "a", first.note, "oldest first")
	assert.True(t, w.push(&queued{note: "last"}), "room again after one was handed")

	var last *queued
	for n := 1; ; n++ {
		q, ok := w.pop()
		if !ok {
			assert.Equal(t, QueueLength+1, n, "every Event pushed came out once")
			break
		}
		last = q
	}
	assert.Equal(t, "last", last.note)
	assert.Zero(t, w.ring.Cap(), "the emptied queue holds no array")
}

// A queue that never empties keeps an array the size of what waits, not
// of every Event that passed through it, and keeps their order.
func TestWaitingThatNeverEmptiesStaysTheSizeOfWhatWaits(t *testing.T) {
	t.Parallel()
	w := &waiting{ready: make(chan struct{}, 1)}
	next, want, most := 0, 0, 0
	for range 50 {
		for range 100 {
			require.True(t, w.push(&queued{note: string(rune(next))}))
			next++
		}
		most = max(most, next-want)
		for range 90 {
			q, ok := w.pop()
			require.True(t, ok)
			require.Equal(t, string(rune(want)), q.note, "oldest first")
			want++
		}
	}
	assert.Equal(t, next-want, w.ring.Len())
	assert.LessOrEqual(t, w.ring.Cap(), 2*most, "the array holds what waits, not all that passed")
}
