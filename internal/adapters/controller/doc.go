// Package controller is the controller loop: the driving adapter that turns
// change notifications into calls of a domain ports.Reconciler, the way
// controller-runtime's controller does, rebuilt on client-go's work queue
// and consuming only ports.
//
//	ports.Source ──▶ predicates ──▶ MapFunc ──▶ work queue ──▶ workers ──▶ ports.Reconciler
//	                                               ▲                │
//	                                               └─ back-off / requeue-after
//
// Controllers are declared with app.Controller (For, Owns, Watches), which
// fills in a [Config] and calls [New]; [Module] runs every controller of the
// fx group [GroupControllers]. Standalone:
//
//	c, err := controller.New(controller.Config{Name: "things", Workers: 2, Reconciler: r,
//		Watches: []controller.Watch{{Source: things, Map: controller.EnqueueObject}}}, deps)
//	err = c.Start(ctx) // later c.Stop(ctx)
//
// A watch's predicates (package predicate) drop events; its [MapFunc] names
// the requests an event causes: the object itself ([EnqueueObject]), its
// controlling owner ([EnqueueOwner]) or anything a function computes. A
// request names an object only, so a reconcile reads current state.
//
// The workers start once every watched source has synced and the
// ports.LeaderElector says this replica leads. Each reconcile gets a UUID, a
// logger ([LoggerFrom], [ReconcileIDFrom]) and a deadline
// (Options.ReconcileTimeout). Its outcome decides, as in controller-runtime,
// whether the request comes back: with back-off after an error (ports.ErrConflict
// counted as result "requeue"), never after a ports.Terminal error, after
// Result.RequeueAfter, or at the next event. Before a reconcile it waits until the
// caches have applied the previous reconcile's writes of the same request
// (see freshness.go). [Controller.StuckCheck] is a liveness check.
//
// The metrics are controller-runtime's, labelled with the controller's name
// (controller_runtime_reconcile_total{controller,result} and the rest, the
// workqueue_* ones through [MetricsProvider]), plus
// operator_reconcile_cache_waits_total and operator_reconcile_overruns_total,
// on the registry in [Deps]; a controller name may be used once per registry.
package controller
