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
// fx runs OnStart hooks in the order their constructors ran, and stops in
// reverse within --shutdown-timeout. The preflight module comes first, so
// an unreachable API server or a missing CRD fails start-up before anything
// listens or watches: logging, the preflight checks (API server, ChaosPod
// CRD), then the metrics, health and webhook servers (webhooks serve on
// every replica), the leader elector, the caches and the event recorder,
// and the controllers last, which wait for cache sync and leadership before
// their workers run. docs/architecture.md has the full order.
package app
