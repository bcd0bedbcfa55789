// Package controller is the controller loop: the driving adapter that turns
// change notifications into calls of a domain ports.Reconciler, the way
// controller-runtime's controller does, rebuilt on client-go's work queue
// and consuming only ports.
//
//	ports.Source ──▶ predicate ──▶ handler.Mapper ──▶ work queue ──▶ workers ──▶ ports.Reconciler
//	                                                   ▲                 │
//	                                                   └─ back-off / requeue-after
//
// A controller is declared with a [Builder] (or a [Config] and [New]):
//
//	c, err := controller.NewBuilder("replicaset", deps).
//		For(replicaSets, predicate.Or(predicate.GenerationChanged(), predicate.LabelChanged())).
//		Owns(pods, schema.GroupKind{Group: "apps", Kind: "ReplicaSet"}).
//		Workers(4).
//		Complete(reconciler)
//
// and run with [Controller.Start] and [Controller.Stop], or by [Module] in an
// fx application ([Provide] adds a controller to it).
//
// # Handlers
//
// Sources deliver objects; reconcilers take requests (a namespace and a
// name, nothing else, so that a reconcile reads current state instead of
// trusting an event). Package handler holds the mappers between the two:
// the object itself (For), its controlling owner (Owns), or a function
// (Watches). They only map; they know nothing of the reconcile.
//
// # Predicates
//
// Package predicate filters events before they are mapped: generation,
// resourceVersion, label and annotation changes, and their combinations with
// And, Or and Not. A watch's predicates must all pass. Filtering is an
// optimisation only: the reconciler converges whatever gets through.
//
// # Queue
//
// Each controller has one client-go typed rate-limiting work queue of
// ports.Request, made when it starts. The queue deduplicates (a burst of
// events for one object is one reconcile) and never hands the same request
// to two workers at once: a request that changes while it is being
// reconciled is queued again and reconciled after. Failed requests come back
// after a per-request exponential back-off under an overall token bucket,
// client-go's workqueue.DefaultTypedControllerRateLimiter, unless
// Options.NewRateLimiter says otherwise.
//
// # Workers
//
// Start registers the handlers on the sources at once, so nothing that
// happens meanwhile is lost, and returns. In the background the controller
// waits for every source it watches to sync (ports.Source's WaitForSync),
// then for ports.LeaderElector, and only then starts its workers:
// no reconcile reads a half-filled cache, and only the leader reconciles.
//
// A worker takes a request, gives it a reconcile ID (a UUID), a logger with
// the fields controller, namespace, name and reconcileID ([LoggerFrom],
// [ReconcileIDFrom]) and a context bounded by Options.ReconcileTimeout, and
// calls the reconciler. The outcome decides what happens next, exactly as in
// controller-runtime:
//
//   - an error: logged, and the request is retried with back-off;
//   - an error wrapping ports.ErrConflict (someone wrote the object after
//     it was read): retried with back-off, counted as result "requeue" and
//     logged at debug only, because optimistic concurrency is not a fault
//     to alert on;
//   - an error marked ports.Terminal: logged, counted, and dropped;
//   - Result.RequeueAfter > 0: the back-off is reset and the request comes
//     back after that long;
//   - success: the back-off is reset; the request comes back only when an
//     event says so.
//
// # Read-your-own-writes
//
// A reconcile's writes reach the cache through the watch a few milliseconds
// later, and a reconcile of the same request that starts inside that window
// would act on the state from before them: create a second Pod, or patch and
// announce a label twice. So each reconcile's context carries a
// ports.WriteObserver; the kube writers report the resourceVersion the API
// server returned for every create, update and patch (ports.ObserveWrite),
// and the controller keeps the newest per request and kind. Before the next
// reconcile of that request it waits until the watched sources of those
// kinds (matched by schema.GroupKind) have applied them: usually no wait at all, since the write's own watch event is
// what queued the request again. A wait longer than
// Options.ReadYourWritesTimeout fails the reconcile, which is retried with
// back-off rather than run on stale state. Waits are counted in
// operator_reconcile_cache_waits_total. Deletes are not tracked: the API
// server does not return a resourceVersion for them through client-go.
// Options.DisableReadYourWrites turns this off.
//
// A panic in the reconciler is recovered, logged with its stack, counted
// and handled as an error (so retried).
//
// Stop makes the workers take no new request (what is still queued is
// dropped; the next leader lists everything again), waits for the reconciles
// in flight until its context ends, and then cancels them and reports which
// ones did not finish. A reconcile that runs much longer than its timeout
// fails the liveness check [Controller.StuckCheck], so that a wedged
// process is restarted; one still running a little past its timeout (a
// tenth of it, at most a second) is logged ("reconcile ignores its
// deadline") and counted in operator_reconcile_overruns_total as it happens.
//
// # Metrics
//
// The controller registers controller-runtime's metrics, with its name as
// the controller label, on the prometheus.Registerer it is given (never the
// global one; several controllers share one registry):
// controller_runtime_reconcile_total{controller,result} with result in
// success, error, requeue_after and requeue (created at zero; requeue counts
// the reconciles that conflicted, as controller-runtime counts a requeue
// asked for without an error),
// controller_runtime_reconcile_errors_total,
// controller_runtime_terminal_reconcile_errors_total,
// controller_runtime_reconcile_panics_total,
// controller_runtime_reconcile_timeouts_total (reconciles whose own
// deadline, Options.ReconcileTimeout, ended their context; not a stop),
// controller_runtime_reconcile_time_seconds,
// controller_runtime_active_workers and
// controller_runtime_max_concurrent_reconciles. Its queue reports the
// workqueue_* metrics through [MetricsProvider], with the controller's name
// as the name label. A controller name may be used once per registry.
package controller
