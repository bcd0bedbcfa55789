package ports

import "context"

// HealthCheck knows how to tell whether one part of the process works. The
// health adapter serves liveness (/healthz) and readiness (/readyz) from a
// set of them.
type HealthCheck interface {
	// Name is short and stable; it appears in the probe's verbose output.
	Name() string
	// Check returns nil when the part is healthy.
	Check(ctx context.Context) error
}
