package chaospod

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestStopGateWithoutStopsDoesNotWait(t *testing.T) {
	t.Parallel()
	var g stopGate
	began := time.Now()
	require.NoError(t, g.wait(context.Background(), time.Hour))
	assert.Less(t, time.Since(began), time.Second)

	// Back to no stop in flight after some came and went.
	g.begin()
	g.begin()
	g.end()
	g.end()
	require.NoError(t, g.wait(context.Background(), time.Hour))
}

func TestStopGateWaitsForTheLastStop(t *testing.T) {
	t.Parallel()
	var g stopGate
	g.begin()
	g.begin()
	done := make(chan error, 1)
	go func() { done <- g.wait(context.Background(), time.Hour) }()

	g.end()
	select {
	case err := <-done:
		t.Fatalf("wait returned (err %v) with a stop still in flight", err)
	case <-time.After(20 * time.Millisecond):
	}
	g.end()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("wait did not return once the stops were done")
	}
}

func TestStopGateWaitsNoLongerThanTheLimit(t *testing.T) {
	t.Parallel()
	var g stopGate
	g.begin() // never ends
	began := time.Now()
	require.NoError(t, g.wait(context.Background(), 20*time.Millisecond))
	assert.GreaterOrEqual(t, time.Since(began), 20*time.Millisecond)
}

func TestStopGateWaitEndsWithItsContext(t *testing.T) {
	t.Parallel()
	var g stopGate
	g.begin()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := g.wait(ctx, time.Hour)
	require.ErrorIs(t, err, context.Canceled)
}
