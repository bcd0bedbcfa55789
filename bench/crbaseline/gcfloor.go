package main

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// gcFloor is the operator's heap floor (its internal/gcfloor package,
// which this module cannot import), written again for the expert mode:
// after every collection it raises the GC target while the live heap is
// too small for the target alone to let the heap reach the floor, and
// gives the raise back once it is large enough. Go has no option for it,
// and neither GOMEMLIMIT (a ceiling, not a floor) nor a ballast (which adds
// to the live heap instead of standing in for it) is the same thing.
type gcFloor struct {
	bytes uint64
	base  int // the target the floor never goes below

	mu      sync.Mutex
	percent int // the target last set; guarded by mu
}

// floorSentinel is allocated for each cycle and dropped at once; its
// cleanup runs after the cycle that found it unreachable. The pointer keeps
// it out of the tiny allocator.
type floorSentinel struct{ _ *gcFloor }

// startGCFloor follows collections from the next one on, for the
// process's life; it does nothing when bytes is 0 or collection is off.
// The target in force when it starts (GOGC, or the mode's) is the least it
// sets.
func startGCFloor(bytes uint64) {
	base := currentGCPercent()
	if bytes == 0 || base < 0 {
		return
	}
	f := &gcFloor{bytes: bytes, base: base, percent: base}
	f.arm()
}

func (f *gcFloor) arm() { runtime.AddCleanup(&floorSentinel{}, (*gcFloor).collected, f) }

func (f *gcFloor) collected() {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/gc/scan/stack:bytes"}, {Name: "/gc/scan/globals:bytes"}}
	metrics.Read(s)
	live := sampleValue(s[0])
	if p := floorPercent(f.bytes, live, live+sampleValue(s[1])+sampleValue(s[2]), f.base); p != f.percent {
		debug.SetGCPercent(p)
		f.percent = p
	}
	f.arm()
}

// floorPercent is the least target, not below base, whose goal reaches
// floor after a cycle that left live bytes live and scannable bytes to
// scan. The runtime's goal is also at least heapMinimum×target/100, so the
// target is held where that minimum is the floor (the operator's rule).
func floorPercent(floor, live, scannable uint64, base int) int {
	const heapMinimum, maxPercent = 4 << 20, 100_000
	if live >= floor || scannable == 0 {
		return base
	}
	need := ((floor-live)*100 + scannable - 1) / scannable
	need = min(need, floor*100/heapMinimum, maxPercent)
	return max(base, int(need))
}

// currentGCPercent is the target in force, -1 when collection is off.
func currentGCPercent() int {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	if p := sampleValue(s[0]); p <= math.MaxInt32 {
		return int(p)
	}
	return -1
}

func sampleValue(s metrics.Sample) uint64 {
	if s.Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s.Value.Uint64()
}
