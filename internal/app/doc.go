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
// Every part with a lifecycle is registered in a phase of package
// lifecycle; the phases start in their declared order and stop in reverse
// within --shutdown-timeout: logging, the preflight checks (API server,
// permissions, ChaosPod CRD), telemetry (client-go metrics, /metrics, the
// API server probe), the informers, the webhook certificates and server
// (webhooks serve on every replica), the leader elector, the Event
// recorder, the probes, and the controllers last, which wait for their
// sources to sync and for leadership before their workers run. A SIGTERM so
// stops the controllers, releases the Lease, and only then drains the
// webhook server. docs/architecture.md has the full sequence.
package app
