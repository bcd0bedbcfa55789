package gcfloor

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

const (
	// heapMinimum is the runtime's least goal at a target of 100; it
	// scales with the target.
	heapMinimum = 4 << 20
	// maxPercent bounds the target, and so the floor (to 4 GiB while the
	// live heap is small, and the arithmetic below from overflow).
	maxPercent = 100_000
	// maxFloor keeps floor×100 within a uint64.
	maxFloor = 1 << 50
)

// Floor keeps the heap goal at or above a size while it runs.
type Floor struct {
	bytes uint64
	base  int // the target the floor never goes below, and restores on Stop

	mu      sync.Mutex
	stopped bool      // guarded by mu
	percent int       // the target last set; guarded by mu
	read    func() gc // the live heap after the last cycle
	set     func(int) // sets the target
	arm     func()    // has collected called after the next cycle
}

// gc is what the runtime reports of the last cycle: the bytes it found
// live, and the bytes its target is a percentage of (the live heap plus
// the goroutine stacks and globals it scanned).
type gc struct {
	live, scannable uint64
}

// sentinel is allocated for each cycle and dropped at once; its cleanup
// runs after the cycle that found it unreachable. The pointer keeps it out
// of the tiny allocator, which could keep it alive with a neighbour.
type sentinel struct{ _ *Floor }

// Start raises the GC target whenever the live heap is too small for the
// current target to reach bytes, from the next collection on. The target
// in force (GOGC) is the least it sets and what Stop restores. It does
// nothing when bytes is 0 or collection is off (GOGC=off).
func Start(bytes uint64) *Floor {
	base := gcPercent()
	f := &Floor{bytes: min(bytes, maxFloor), base: base, percent: base, read: readGC, set: setPercent}
	f.arm = f.armSentinel
	if bytes == 0 || base < 0 {
		f.stopped = true
		return f
	}
	f.arm()
	return f
}

// Stop stops following collections and restores the target Start found.
func (f *Floor) Stop() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.stopped {
		return
	}
	f.stopped = true
	if f.percent != f.base {
		f.set(f.base)
		f.percent = f.base
	}
}

func (f *Floor) armSentinel() {
	runtime.AddCleanup(&sentinel{}, (*Floor).collected, f)
}

// collected runs once per cycle, after it: it sets the target for the next
// one and arms the next sentinel.
func (f *Floor) collected() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.stopped {
		return
	}
	if p := percentFor(f.bytes, f.read(), f.base); p != f.percent {
		f.set(p)
		f.percent = p
	}
	f.arm()
}

// percentFor is the least target, not below base, whose goal reaches
// floor after a cycle that left g. The runtime's goal is the larger of
// live + scannable×percent/100 and a minimum of heapMinimum×percent/100:
// on a small heap the minimum governs, so the target is held where the
// minimum is the floor (a target computed from the live heap alone would
// put the goal several times past the floor, and a burst such as an
// informer's first list would fill it).
func percentFor(floor uint64, g gc, base int) int {
	if g.live >= floor || g.scannable == 0 {
		return base
	}
	need := ((floor-g.live)*100 + g.scannable - 1) / g.scannable // rounded up
	need = min(need, floor*100/heapMinimum, maxPercent)
	return max(base, int(need))
}

const (
	metricGOGC    = "/gc/gogc:percent"
	metricLive    = "/gc/heap/live:bytes"
	metricStacks  = "/gc/scan/stack:bytes"
	metricGlobals = "/gc/scan/globals:bytes"
)

func readGC() gc {
	s := []metrics.Sample{{Name: metricLive}, {Name: metricStacks}, {Name: metricGlobals}}
	metrics.Read(s)
	live := value(s[0])
	return gc{live: live, scannable: live + value(s[1]) + value(s[2])}
}

// gcPercent is the target in force, -1 when collection is off (the
// metric reports off as the largest uint64).
func gcPercent() int {
	s := []metrics.Sample{{Name: metricGOGC}}
	metrics.Read(s)
	p := value(s[0])
	if p > math.MaxInt32 {
		return -1
	}
	return int(p)
}

// value is a sample's value, 0 for a metric this Go release lacks.
func value(s metrics.Sample) uint64 {
	if s.Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s.Value.Uint64()
}

func setPercent(p int) { debug.SetGCPercent(p) }
