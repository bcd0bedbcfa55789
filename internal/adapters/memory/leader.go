package memory

import (
	"sync"

	"github.com/hexagonal-operator/operator/internal/ports"
)

// LeaderElector is a ports.LeaderElector that a test elects by hand, to see
// what runs before and after leadership.
type LeaderElector struct {
	elected chan struct{}
	once    sync.Once
}

var _ ports.LeaderElector = (*LeaderElector)(nil)

// NewLeaderElector returns a standby; call Elect to make it lead.
func NewLeaderElector() *LeaderElector {
	return &LeaderElector{elected: make(chan struct{})}
}

// Elected implements ports.LeaderElector.
func (l *LeaderElector) Elected() <-chan struct{} { return l.elected }

// Elect makes this replica the leader. Idempotent.
func (l *LeaderElector) Elect() { l.once.Do(func() { close(l.elected) }) }

// IsLeader reports whether Elect was called.
func (l *LeaderElector) IsLeader() bool {
	select {
	case <-l.elected:
		return true
	default:
		return false
	}
}
