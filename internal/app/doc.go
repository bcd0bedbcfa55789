// Package app is the composition root: the one place that knows every
// adapter. It turns a config.Config into an fx application — adapters as fx
// modules, the domain's reconcilers wired to their ports, controllers built
// from them.
//
// # Reuse in tests
//
// [New] takes extra fx options after the defaults, so a test can swap any
// adapter for another implementation of the same port:
//
//	app.New(cfg, fx.Decorate(func(ports.EventRecorder) ports.EventRecorder { return memory.NewEventRecorder() }))
//	app.New(cfg, fx.Replace(restConfig))
//
// # Start order
//
// A part starts once fx has built it, after what it is built from, and
// stops in the reverse order within --shutdown-timeout; [Options] states
// the few orders no dependency gives (the preflight checks first). A
// SIGTERM so stops the controllers, releases the Lease, and only then
// drains the webhook server.
package app
