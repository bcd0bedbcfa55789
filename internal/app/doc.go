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
// fx runs OnStart hooks in dependency order: logging, the preflight check of
// the API server, metrics and health servers, the webhook server (on every
// replica), caches, the leader elector,
// then controllers (which wait for cache sync and leadership before their
// workers run). Stop runs in reverse within --shutdown-timeout.
package app
