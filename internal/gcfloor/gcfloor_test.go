package gcfloor

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const mib = 1 << 20

func TestPercentForReachesTheFloorAndNeverGoesBelowTheBase(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		floor uint64
		g     gc
		base  int
		want  int
	}{
		{"small heap: the target stretches to the floor", 12 * mib, gc{live: 4 * mib, scannable: 4 * mib}, 75, 200},
		{"stacks and globals count towards the goal", 12 * mib, gc{live: 4 * mib, scannable: 5 * mib}, 75, 160},
		{"rounded up, so the goal is never short", 10 * mib, gc{live: 3 * mib, scannable: 3 * mib}, 75, 234},
		{"tiny heap: the runtime's minimum is the floor", 12 * mib, gc{live: 1 * mib, scannable: 1 * mib}, 75, 300},
		{"the target alone reaches the floor", 12 * mib, gc{live: 8 * mib, scannable: 8 * mib}, 75, 75},
		{"live heap above the floor", 12 * mib, gc{live: 20 * mib, scannable: 20 * mib}, 75, 75},
		{"live heap at the floor", 12 * mib, gc{live: 12 * mib, scannable: 12 * mib}, 75, 75},
		{"a user's higher target is kept", 12 * mib, gc{live: 4 * mib, scannable: 4 * mib}, 400, 400},
		{"nearly empty heap, huge floor: bounded", 1 << 40, gc{live: 1 << 10, scannable: 1 << 10}, 75, maxPercent},
		{"nothing reported yet", 12 * mib, gc{}, 75, 75},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := percentFor(tt.floor, tt.g, tt.base)
			assert.Equal(t, tt.want, got)
			if got > tt.base && got < maxPercent {
				goal := func(p int) uint64 {
					return max(tt.g.live+tt.g.scannable*uint64(p)/100, heapMinimum*uint64(p)/100)
				}
				assert.InDelta(t, tt.floor, goal(got), float64(tt.floor)/100, "the goal is the floor")
				assert.Less(t, goal(got-1), tt.floor, "not the least target")
			}
		})
	}
}

func TestCollectedFollowsEachCycleAndStopRestoresTheBase(t *testing.T) {
	t.Parallel()
	var set []int
	armed := 0
	live := gc{live: 2 * mib, scannable: 2 * mib}
	f := &Floor{
		bytes: 12 * mib, base: 75, percent: 75,
		read: func() gc { return live },
		set:  func(p int) { set = append(set, p) },
		arm:  func() { armed++ },
	}

	f.collected()
	f.collected() // same heap: the target is not set again
	live = gc{live: 4 * mib, scannable: 4 * mib}
	f.collected()
	live = gc{live: 16 * mib, scannable: 16 * mib}
	f.collected()
	assert.Equal(t, []int{300, 200, 75}, set)

	live = gc{live: 2 * mib, scannable: 2 * mib}
	f.collected()
	f.Stop()
	f.Stop()
	f.collected() // a cleanup already queued when Stop ran
	assert.Equal(t, []int{300, 200, 75, 300, 75}, set, "Stop restores the base once; nothing after it")
	assert.Equal(t, 5, armed, "each cycle arms the next, until Stop")
}

// TestStartRaisesTheRuntimesTargetUntilStopped runs the floor on the
// process's own collector, so it is not parallel.
func TestStartRaisesTheRuntimesTargetUntilStopped(t *testing.T) {
	before := debug.SetGCPercent(75)
	t.Cleanup(func() { debug.SetGCPercent(before) })

	f := Start(64 << 20) // far above this test binary's live heap
	require.Eventually(t, func() bool {
		runtime.GC()
		return gcPercent() > 75
	}, 10*time.Second, 10*time.Millisecond, "the target never followed a collection")

	f.Stop()
	assert.Equal(t, 75, gcPercent(), "Stop restores the target")
	runtime.GC()
	runtime.GC()
	time.Sleep(10 * time.Millisecond) // let a queued cleanup run
	assert.Equal(t, 75, gcPercent(), "a stopped floor stays stopped")
}

func TestStartDoesNothingWithoutAFloorOrWithCollectionOff(t *testing.T) {
	before := debug.SetGCPercent(-1)
	t.Cleanup(func() { debug.SetGCPercent(before) })
	Start(1 << 30)
	runtime.GC()
	time.Sleep(10 * time.Millisecond)
	assert.Equal(t, -1, gcPercent(), "GOGC=off is left off")

	debug.SetGCPercent(75)
	Start(0)
	runtime.GC()
	time.Sleep(10 * time.Millisecond)
	assert.Equal(t, 75, gcPercent(), "a zero floor is no floor")
}
