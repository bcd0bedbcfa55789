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
// Ready is the Pod as a user reads it: True only while it runs and is
// ready; False while it is Pending, cannot pull an image, crash-loops, is
// not ready, or has ended, with the scheduler's or the kubelet's words.
// Each change of the Pod's status brings a reconcile; the Pod is stopped
// at nextStop whatever its state. The reconciler reads only the Pods
// PodSelector selects, and of them only what TrimPod keeps, so a cache of
// them costs little.
//
// Every step is safe to repeat: conflicts are retried from a fresh read,
// and a run whose Pod exists but is not yet recorded is recorded rather
// than stopped. Refusals are Warning Events and a Ready=False reason whose
// message is the API server's (ports.Cause).
package chaospod
