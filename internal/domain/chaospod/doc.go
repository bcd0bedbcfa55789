// Package chaospod holds the ChaosPod reconciler: each ChaosPod runs one Pod
// named like itself, stops it at spec.nextStop and starts a new one.
//
// # Cycle
//
// No Pod → create it from spec.template with a controller owner reference
// to the ChaosPod, then record the run: spec.nextStop = now + interval and
// status.lastRun = the Pod's creation time (status through the status
// subresource). Pod exists and nextStop has passed → delete it (the delete
// event brings the next reconcile, which re-creates it). Pod exists and
// nextStop is in the future → requeue for exactly nextStop − now, read from
// ports.Clock so tests can pin time.
//
// # Ready and Warnings
//
// status.conditions holds Ready, stated for the generation it was computed
// from: True (PodRunning) while the Pod runs towards spec.nextStop, False
// while it terminates after its stop (PodReplacing), when the API server
// refuses to create it (PodCreateFailed, with the server's words) or when
// a Pod of the name is not the ChaosPod's (PodNotControlled). It is written
// only when it would change, through the status subresource, and a run's
// Ready travels in the same write as its status.lastRun, so the cycle costs
// no extra write. Refusals and terminal errors are also Warning Events
// whose note carries the cause (ports.Cause: the API server's message).
//
// # Stops before starts
//
// Stops fall due at whole seconds (nextStop is stored with second
// precision), so the Pods started in the same second are stopped together,
// as a burst of DELETEs. A start (a Pod CREATE and two ChaosPod writes, all
// admitted by webhooks) is several times a DELETE's work for the API
// server, and each deleted Pod brings one. So a start first waits until no
// stop of this reconciler is in flight, for at most [MaxStartDelay]: a stop
// is promised for its time, a start only for "soon after". The stop's own
// Event waits the same way.
//
// The interval is v2's spec.stop.interval, which v1 keeps in the
// chaosapps.metamagical.io/stop-interval annotation; a v1 object without it
// gets a random 10s or 20s, as the original example does.
//
// # Conflicts and retries
//
// Writes are optimistic (resourceVersion): a conflict is returned, the loop
// retries with back-off, and the retry starts from a fresh read, so an edit
// someone else made meanwhile is kept, never overwritten. A run whose Pod
// exists but is not yet recorded (status.lastRun differs from the Pod's
// creation time, e.g. because the spec write conflicted) is recorded rather
// than stopped, which makes every step safe to repeat.
package chaospod
