//go:build race

package operatorproc

// raceEnabled is true when this test binary runs with the race detector, so
// that Build instruments the operator the same way.
const raceEnabled = true
