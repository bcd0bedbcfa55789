// Package clock plugs ports.Clock into the wall clock. The domain never calls
// time.Now itself, so that tests can pin "now" with memory.Clock; this is the
// production side of that seam.
package clock
