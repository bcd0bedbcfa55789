package ports

// LeaderElector knows whether this replica leads. Controllers run only on the
// leader; webhooks and caches run everywhere.
type LeaderElector interface {
	// Elected returns a channel that is closed once this replica has become
	// the leader. It is never closed on a standby.
	Elected() <-chan struct{}
}
