package health

import (
	"context"

	"github.com/hexagonal-operator/operator/internal/ports"
)

// CheckFunc turns a function into a named ports.HealthCheck.
type CheckFunc struct {
	name  string
	check func(ctx context.Context) error
}

var _ ports.HealthCheck = CheckFunc{}

// NewCheck returns the check called name that runs f.
func NewCheck(name string, f func(ctx context.Context) error) CheckFunc {
	return CheckFunc{name: name, check: f}
}

// Name implements ports.HealthCheck.
func (c CheckFunc) Name() string { return c.name }

// Check implements ports.HealthCheck.
func (c CheckFunc) Check(ctx context.Context) error { return c.check(ctx) }

// Ping always passes: it tells that the server answers at all, as the API
// server's own "ping" check does.
var Ping = NewCheck("ping", func(context.Context) error { return nil })
