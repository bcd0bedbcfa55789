// Package health serves the kubelet's probes, /healthz (liveness) and
// /readyz (readiness), over plain HTTP from sets of Check,
// answering as the Kubernetes API server's probes do: 200 "ok", or 500 with
// a `[+]name ok` / `[-]name failed: reason` line per check so the kubelet's
// event says what is wrong; ?verbose lists the checks on success too,
// ?exclude=name skips one, /readyz/<name> runs one.
//
// Adapters contribute checks to the fx value groups "healthz" and "readyz";
// [NewCheck] makes one from a function. A liveness check fails only when a
// restart would help (a wedged process); a readiness check only when this
// replica cannot serve admission, since an unready replica leaves the
// webhook Service. The API server's reachability is in neither: admission
// never calls it.
package health
