package clock

import (
	"time"

	"github.com/hexagonal-operator/operator/internal/ports"
)

// Real tells the wall-clock time.
type Real struct{}

var _ ports.Clock = (*Real)(nil)

// New returns the real clock.
func New() (*Real, error) { return &Real{}, nil }

// Now implements ports.Clock.
func (Real) Now() time.Time { return time.Now() }
