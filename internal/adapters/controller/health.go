package controller

import (
	"context"
	"fmt"
	"time"

	"github.com/hexagonal-operator/operator/internal/ports"
)

// StuckCheck returns the controller's liveness check: it fails, naming the
// request, while a reconcile has run longer than Options.StuckThreshold,
// ignoring its deadline and holding a worker for good: only a restart,
// which a failing /healthz asks for, cures that.
func (c *Controller) StuckCheck() ports.HealthCheck { return stuckCheck{c: c} }

type stuckCheck struct{ c *Controller }

var _ ports.HealthCheck = stuckCheck{}

func (s stuckCheck) Name() string { return "controller-" + s.c.name }

func (s stuckCheck) Check(context.Context) error {
	c := s.c
	now := time.Now()
	c.inflightMu.Lock()
	defer c.inflightMu.Unlock()
	var (
		oldest  ports.Request
		longest time.Duration
	)
	for req, start := range c.inflight {
		if d := now.Sub(start); d > longest {
			oldest, longest = req, d
		}
	}
	if longest > c.opts.StuckThreshold {
		return fmt.Errorf("controller %q: reconcile of %s running for %s, over the %s threshold",
			c.name, oldest, longest.Round(time.Millisecond), c.opts.StuckThreshold)
	}
	return nil
}
