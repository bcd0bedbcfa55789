// Package gcfloor keeps the garbage collector's heap goal from falling
// below a floor: [Start] raises the GC target while the live heap is small,
// so the heap may grow to the floor before a collection, and gives it back
// once the target alone reaches it. The heap's peak is the larger of the
// floor and what the target gives, never their sum (as a ballast's would
// be); GOMEMLIMIT still caps it.
//
// Without it, an operator with a small cache and busy webhooks collects
// many times a second, marking a heap that hardly changed. The runtime has
// no such knob, so the floor follows each collection: a sentinel object's
// cleanup runs after the cycle that found it dead, reads the live heap from
// runtime/metrics, sets the target with debug.SetGCPercent and arms the
// next sentinel.
package gcfloor
