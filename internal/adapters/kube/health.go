package kube

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"k8s.io/client-go/rest"

	"github.com/hexagonal-operator/operator/internal/kubeclient"
	"github.com/hexagonal-operator/operator/internal/ports"
)

// APIServerCheckName names the readiness check of the API server.
const APIServerCheckName = "apiserver"

// APIServerCheck is a readiness check that fails while the API server does
// not answer GET /version. The caches keep serving their last state through
// an outage, so no other check notices one; this one makes /readyz tell.
// Answers are reused for a second, so that frequent probes cost the API
// server at most one request a second.
type APIServerCheck struct {
	client  rest.Interface
	timeout time.Duration
	ttl     time.Duration

	mu      sync.Mutex
	checked time.Time
	last    error
}

var _ ports.HealthCheck = (*APIServerCheck)(nil)

// NewAPIServerCheck returns the check, asking through client's REST
// client. It does no I/O.
func NewAPIServerCheck(client kubeclient.Interface) (*APIServerCheck, error) {
	if client == nil || client.RESTClient() == nil {
		return nil, errors.New("api server check: a kubernetes client with a REST client is required")
	}
	return &APIServerCheck{client: client.RESTClient(), timeout: 2 * time.Second, ttl: time.Second}, nil
}

// Name implements ports.HealthCheck.
func (c *APIServerCheck) Name() string { return APIServerCheckName }

// Check implements ports.HealthCheck.
func (c *APIServerCheck) Check(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.checked.IsZero() && time.Since(c.checked) < c.ttl {
		return c.last
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	c.last = nil
	if err := c.client.Get().AbsPath("/version").Do(ctx).Error(); err != nil {
		c.last = fmt.Errorf("api server unreachable: %w", err)
	}
	c.checked = time.Now()
	return c.last
}
