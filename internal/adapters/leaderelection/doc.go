// Package leaderelection decides which replica runs the controllers with
// client-go's tools/leaderelection on a coordination.k8s.io/v1 Lease, and
// offers the answer as Elected(), a channel closed once this
// replica holds the Lease (at once when leader election is disabled).
//
// Stop, after the controllers have stopped, releases the Lease so a standby
// takes over at its next retry. Losing the Lease any other way cannot be
// undone safely, since another replica may already reconcile: the elector
// logs "leadership lost" once and calls [Options.OnLost] (the Module shuts
// the application down with exit code 1, as controller-runtime's manager
// does). The elector reports leader_election_master_status and
// leader_election_slowpath_total{name="<lease>"} on the operator's registry,
// and is a liveness check.
package leaderelection
