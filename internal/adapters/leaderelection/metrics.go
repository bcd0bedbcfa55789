package leaderelection

import (
	"errors"
	"sync"

	"k8s.io/client-go/tools/leaderelection"
)

// client-go's elector reports its metrics to a process-wide provider, set
// once, that it asks for each elector's metric when the elector is made.
// The provider here hands out the metric of the Elector being made, so
// that each reports to its own registry (tests run several in a process).
var (
	providerOnce sync.Once
	provider     = &metricsProvider{}
)

type metricsProvider struct {
	mu    sync.Mutex // held while an elector is made
	next  leaderelection.LeaderMetric
	asked bool
}

func (p *metricsProvider) NewLeaderMetric() leaderelection.LeaderMetric {
	p.asked = true
	return p.next
}

// newLeaderElector makes client-go's elector, reporting to metric. It
// fails when another package set client-go's provider first, which would
// leave the metrics at zero.
func newLeaderElector(config leaderelection.LeaderElectionConfig, metric leaderelection.LeaderMetric) (*leaderelection.LeaderElector, error) {
	providerOnce.Do(func() { leaderelection.SetProvider(provider) })
	provider.mu.Lock()
	defer provider.mu.Unlock()
	provider.next, provider.asked = metric, false
	defer func() { provider.next = nil }()
	le, err := leaderelection.NewLeaderElector(config)
	if err == nil && !provider.asked {
		return nil, errors.New("client-go's leader election metrics provider was set by another package")
	}
	return le, err
}

// leaderMetric is an Elector's leader_election_master_status and
// leader_election_slowpath_total.
type leaderMetric struct{ e *Elector }

func (m leaderMetric) On(string)                { m.e.status.Set(1) }
func (m leaderMetric) Off(string)               { m.e.status.Set(0) }
func (m leaderMetric) SlowpathExercised(string) { m.e.slowpath.Inc() }
