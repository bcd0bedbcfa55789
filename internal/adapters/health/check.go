package health

import "context"

// Check tells whether one part of the process works. The parts implement
// it without importing this package; the composition root puts them into
// [GroupHealthz] or [GroupReadyz].
type Check interface {
	// Name is short and stable; it appears in the probe's verbose output.
	Name() string
	// Check returns nil when the part is healthy.
	Check(ctx context.Context) error
}

// CheckFunc turns a function into a named [Check].
type CheckFunc struct {
	name  string
	check func(ctx context.Context) error
}

var _ Check = CheckFunc{}

// NewCheck returns the check called name that runs f.
func NewCheck(name string, f func(ctx context.Context) error) CheckFunc {
	return CheckFunc{name: name, check: f}
}

// Name implements Check.
func (c CheckFunc) Name() string { return c.name }

// Check implements Check.
func (c CheckFunc) Check(ctx context.Context) error { return c.check(ctx) }

// Ping always passes: it tells that the server answers at all, as the API
// server's own "ping" check does.
var Ping = NewCheck("ping", func(context.Context) error { return nil })
