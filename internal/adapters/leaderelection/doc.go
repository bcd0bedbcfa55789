// Package leaderelection decides which replica runs the controllers, with a
// coordination.k8s.io/v1 Lease, and offers the answer as
// ports.LeaderElector.
//
// The elector is client-go's tools/leaderelection algorithm (Lease lock,
// ReleaseOnCancel) on kubeclient: client-go's own links the clientset and
// with it every built-in API group. A standby takes over a Lease held by
// another only once it has seen it unchanged for its duration, by its own
// clock; the holder's clock is never trusted.
//
// # How it behaves
//
// Every replica serves webhooks and keeps its caches warm; only the holder
// of the Lease reconciles. The controller loop waits on Elected(), which is
// closed when this replica acquires the Lease (at once when leader election
// is disabled, the default for a single replica).
//
// Stop — on SIGTERM, after the controllers have stopped — releases the
// Lease (empty holder, one-second duration, as client-go's ReleaseOnCancel
// does), so a standby takes over at its next retry instead of waiting out
// the lease duration.
//
// Losing the Lease any other way (the API server unreachable for longer
// than the renew deadline) cannot be undone safely: another replica may
// already be reconciling. The elector logs it once and calls
// [Options.OnLost]; the fx Module's default shuts the application down with
// exit code 1 and Kubernetes restarts the Pod as a standby, as
// controller-runtime's manager does.
//
// # Observability
//
// leader_election_master_status{name="<lease>"} is 1 while leading, 0
// otherwise, and leader_election_slowpath_total{name="<lease>"} counts the
// renewals whose optimistic update failed and that reread the Lease to
// renew it, as client-go counts them; both are registered on the
// operator's own registry rather than a process-global one, as client-go's
// would be. The elector is also
// a liveness check: a leader that has not renewed its Lease for 20 s past
// its duration is wedged.
package leaderelection
