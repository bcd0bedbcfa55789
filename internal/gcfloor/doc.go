// Package gcfloor keeps the garbage collector's heap goal from falling
// below a floor.
//
// Go sizes the heap relative to what survived the last collection: with a
// GC target of 75 and 3 MiB live, it collects again after 2 MiB of
// garbage. An operator whose cache is small but whose webhooks answer
// thousands of requests a second (each a few kilobytes of garbage) then
// collects sixty times a second and spends a tenth of its CPU, and much of
// its latency tail, marking a heap that hardly changed. The floor raises
// the target while the live heap is small, so the heap may grow to the
// floor before a collection, and gives it back as soon as the live heap
// is large enough for the target alone to reach it: the heap's peak is
// the larger of the floor and what the target gives, never their sum (a
// ballast would add them).
//
// The runtime has no such knob, so the floor follows each collection: a
// sentinel object's cleanup runs after the cycle that found it dead, reads
// the live heap from runtime/metrics, sets the target with
// debug.SetGCPercent and arms the next sentinel. The target it sets
// accounts for the runtime's own minimum goal, 4 MiB scaled by the target:
// a target that stretched a 1 MiB heap to the floor by the live heap alone
// would raise that minimum far past it (to 40 MiB for a 12 MiB floor), and
// a burst of allocation then, such as an informer's first list, would fill
// it. A memory limit (GOMEMLIMIT) still caps the heap: the runtime applies
// it over the target.
package gcfloor
