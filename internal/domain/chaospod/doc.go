// Package chaospod holds the ChaosPod reconciler: each ChaosPod runs one Pod
// named like itself, stops it at spec.nextStop and starts a new one.
//
// No Pod → create it from spec.template and record the run (spec.nextStop =
// now + interval, status.lastRun = the Pod's creation time, Ready) in one
// status write. nextStop passed → delete the Pod; the delete brings the next
// reconcile. Otherwise → requeue for nextStop − now, "now" from
// ports.Clock. The interval is v2's spec.stop.interval, kept by v1 in an
// annotation; without it a random 10s or 20s, as the original example.
//
// Every step is safe to repeat: conflicts are retried from a fresh read,
// and a run whose Pod exists but is not yet recorded is recorded rather
// than stopped. Refusals are Warning Events and a Ready=False reason whose
// message is the API server's (ports.Cause).
package chaospod
