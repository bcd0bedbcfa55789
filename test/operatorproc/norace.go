//go:build !race

package operatorproc

// raceEnabled is false when this test binary runs without the race detector,
// so that Build makes the faster release binary.
const raceEnabled = false
