package controller

// StopRequested lets tests see that Stop has begun (and is now waiting).
func StopRequested(c *Controller) <-chan struct{} { return c.stopping }

// LedgerLen is how many requests have writes their caches may not have
// applied yet.
func LedgerLen(c *Controller) int {
	c.ledger.mu.Lock()
	defer c.ledger.mu.Unlock()
	return len(c.ledger.pending)
}

// NewQueueMetrics registers the workqueue metrics on reg.
var NewQueueMetrics = newQueueMetrics

// RequestsOf is what an event of objs enqueues through m.
var RequestsOf = requestsOf
