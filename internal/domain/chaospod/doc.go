// Package chaospod holds the ChaosPod reconciler: each ChaosPod runs one Pod
// named like itself, stops it at spec.nextStop and starts a new one.
//
// No Pod → create it from spec.template, controlled by the ChaosPod, and
// record the run: spec.nextStop = now + interval, status.lastRun = the
// Pod's creation time, Ready in the same status write. Pod exists and
// nextStop has passed → delete it (the delete brings the next reconcile,
// which re-creates it). Otherwise → requeue for exactly nextStop − now, read
// from ports.Clock so tests can pin time. Stops go before starts (see
// stopGate).
//
// The interval is v2's spec.stop.interval, which v1 keeps in the
// chaosapps.metamagical.io/stop-interval annotation; a v1 object without it
// gets a random 10s or 20s, as the original example does.
//
// Writes are optimistic: a conflict is retried from a fresh read, so an
// edit made meanwhile is kept. A run whose Pod exists but is not yet
// recorded is recorded rather than stopped, so every step is safe to
// repeat. Refusals are Warning Events and a Ready=False reason whose
// message is the API server's (ports.Cause).
package chaospod
