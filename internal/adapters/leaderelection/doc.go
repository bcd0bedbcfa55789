// Package leaderelection decides which replica runs the controllers with
// client-go's tools/leaderelection on a coordination.k8s.io/v1 Lease
// (resourcelock.LeaseLock), and offers the answer as ports.LeaderElector.
//
// # How it behaves
//
// Every replica serves webhooks and keeps its caches warm; only the holder
// of the Lease reconciles. The controller loop waits on Elected(), which is
// closed when this replica acquires the Lease (at once when leader election
// is disabled, the default for a single replica).
//
// Stop — on SIGTERM, after the controllers have stopped — releases the
// Lease (client-go's ReleaseOnCancel), so a standby takes over at its next
// retry instead of waiting out the lease duration.
//
// Losing the Lease any other way (the API server unreachable for longer
// than the renew deadline) cannot be undone safely: another replica may
// already be reconciling. The elector logs "leadership lost" once and calls
// [Options.OnLost]; the fx Module's default shuts the application down with
// exit code 1 and Kubernetes restarts the Pod as a standby, as
// controller-runtime's manager does.
//
// # Observability
//
// leader_election_master_status{name="<lease>"} is 1 while leading, 0
// otherwise, and leader_election_slowpath_total{name="<lease>"} counts the
// renewals whose optimistic update failed, as client-go reports them; both
// are on the operator's own registry. The elector is also a liveness
// check: a leader that has not renewed its Lease for 20 s past its
// duration is wedged.
package leaderelection
