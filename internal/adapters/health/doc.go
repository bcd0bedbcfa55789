// Package health serves the kubelet's probes: /healthz (liveness) and
// /readyz (readiness), over plain HTTP, from sets of ports.HealthCheck.
//
// # Answers
//
// The probes answer as the Kubernetes API server's do, so the same habits
// and tooling apply:
//
//   - GET /readyz runs every readiness check (concurrently, each bounded by
//     [Options.CheckTimeout]) and answers 200 "ok", or 500 with one line
//     per check, `[+]name ok` or `[-]name failed: reason`, so the kubelet's
//     event says what is wrong;
//   - ?verbose lists the checks on success too; ?exclude=name skips one;
//   - GET /readyz/<name> runs one check.
//
// /healthz works the same way with the liveness checks, which always
// include [Ping].
//
// # Checks
//
// Adapters contribute checks through fx value groups "healthz" and
// "readyz" (the cache's sync, the webhook server's TLS, the leader's lease
// renewal). [NewCheck] turns a name and a function into a check. Liveness
// checks must fail only when a restart would help (a wedged process), never
// because a dependency such as the API server is away. Readiness checks must
// fail only when this replica cannot serve admission: an unready replica
// leaves the webhook Service, and with every replica out, every Pod create
// in the cluster fails. The API server is in neither, since admission never
// calls it; its reachability is a metric and a log line of the kube adapter.
package health
