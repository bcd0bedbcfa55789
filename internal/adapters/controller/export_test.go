package controller

// StopRequested lets tests see that Stop has begun (and is now waiting).
func StopRequested(c *Controller) <-chan struct{} { return c.stopping }
