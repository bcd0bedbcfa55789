// Package controller is the controller loop: it turns change notifications
// into calls of a ports.Reconciler, as controller-runtime's controller does,
// on client-go's work queue.
//
//	ports.Source ──▶ predicates ──▶ MapFunc ──▶ work queue ──▶ workers ──▶ ports.Reconciler
//	                                               ▲                │
//	                                               └─ back-off / requeue-after
//
// Controllers are declared with app.Controller, which fills in a [Config]
// and calls [New]; [Module] runs the controllers of the fx group
// [GroupControllers]. A watch's predicates (package predicate) drop events;
// its [MapFunc] names the requests an event causes ([EnqueueObject],
// [EnqueueOwner]). Workers start once every source has synced and the
// ports.LeaderElector says this replica leads; one request is never
// reconciled twice at once. Each reconcile gets a UUID, a logger
// ([LoggerFrom], [ReconcileIDFrom]), a deadline and, first, a wait until the
// caches have applied the previous reconcile's writes (freshness.go). The
// outcome decides, as in controller-runtime, whether the request comes
// back. The metrics are controller-runtime's (controller_runtime_*,
// workqueue_*) plus operator_reconcile_cache_waits_total and
// operator_reconcile_overruns_total; [Controller.StuckCheck] is a liveness
// check.
package controller
