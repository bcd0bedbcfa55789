// Package controller is the controller loop: it turns change notifications
// into calls of a ports.Reconciler, as controller-runtime's controller does,
// on client-go's work queue.
//
//	Source ──▶ predicates ──▶ MapFunc ──▶ work queue ──▶ workers ──▶ ports.Reconciler
//	                                         ▲                │
//	                                         └─ back-off / requeue-after
//
// app.Controller declares a controller ([Config], [New]); [Module] runs
// them. Workers start once every source has synced and this replica leads.
// Each reconcile gets a UUID, a logger ([LoggerFrom]), a deadline and,
// first, a wait until the caches have applied the previous reconcile's
// writes (freshness.go). The metrics are controller-runtime's
// (controller_runtime_*, workqueue_*) plus operator_reconcile_cache_waits_total
// and operator_reconcile_overruns_total.
package controller
