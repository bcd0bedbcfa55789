package reliability_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/hexagonal-operator/operator/test/controlplane"
	"github.com/hexagonal-operator/operator/test/operatorproc"
)

// Leader election timings, short so that a failover fits a test: the
// validation wants lease > renew deadline > retry period × 1.2.
const (
	leaseDuration = 4 * time.Second
	renewDeadline = 3 * time.Second
	retryPeriod   = time.Second
	// maxRetryInterval is the longest wait between two tries of a
	// client-go elector: retryPeriod plus up to JitterFactor (1.2) times it.
	maxRetryInterval = retryPeriod + 12*retryPeriod/10
	// leaseID and leaseNamespace name the Lease the replicas share.
	leaseID, leaseNamespace = "reliability-failover", "default"
	// failoverShutdownTimeout bounds a SIGTERMed leader's stop.
	failoverShutdownTimeout = 10 * time.Second
)

// A killed leader's Lease expires in a standby's eyes leaseDuration after
// the standby last saw it change. The leader renewed it at most a retry
// period before the kill, and the standby may see that renewal only at its
// next try, up to maxRetryInterval later; it takes over at its first try
// after the expiry, up to maxRetryInterval after that. Plus API round trips
// on a busy machine.
const killTakeoverBound = leaseDuration + 2*maxRetryInterval + time.Second

// A SIGTERMed leader releases the Lease as it stops, so a standby takes
// over at its next try (at most maxRetryInterval) instead of waiting out
// the lease.
const termTakeoverBound = 3 * time.Second

// TestLeaderFailover runs several replicas on one Lease and takes the leader
// away twice: SIGKILL (nothing released, the Lease must expire) and SIGTERM
// (the Lease is released). Each time another replica takes over within
// bounds and labels a ReplicaSet created right after the fault; throughout,
// no two replicas lead at once and only the leader reconciles.
func TestLeaderFailover(t *testing.T) {
	t.Parallel()
	// One after the other: at most three replicas run at a time.
	for _, n := range []int{2, 3} {
		t.Run(strconv.Itoa(n)+"-replicas", func(t *testing.T) { leaderFailover(t, n) })
	}
}

func leaderFailover(t *testing.T, n int) {
	cp := controlplane.StartT(t, controlplane.Options{})
	cs := cp.Clientset()
	ctx := context.Background()
	const ns, trickleNS = "failover", "trickle"
	require.NoError(t, cp.EnsureNamespace(ctx, ns))
	require.NoError(t, cp.EnsureNamespace(ctx, trickleNS))

	g := &group{t: t, cp: cp}
	for range n {
		g.start()
	}
	first := g.leader()
	lease := watchLease(t, cs)
	mon := startMonitor(g)
	trickle := startTrickle(t, cs, trickleNS)

	createReplicaSets(t, cs, ns, "before", 1, 1)
	waitAllLabeled(t, cs, ns, 1, 30*time.Second)

	// SIGKILL: nothing is released; a standby must wait for the Lease to
	// expire.
	mon.waitLeading(first)
	holder := lease.holder()
	require.NotEmpty(t, holder)
	killedAt := time.Now()
	require.NoError(t, first.Kill())
	createReplicaSets(t, cs, ns, "after-kill", 1, 1)
	takeover := lease.waitHolderOtherThan(t, killedAt, holder, killTakeoverBound+5*time.Second)
	labeled := waitLabeled(t, cs, ns, "after-kill-0000", 30*time.Second)
	assert.Equal(t, -1, first.Wait(t, 5*time.Second), "killed by a signal")
	g.forget(first)
	figure(t, fmt.Sprintf("failover-%d-replicas-sigkill-takeover", n), takeover.Sub(killedAt))
	figure(t, fmt.Sprintf("failover-%d-replicas-sigkill-first-label", n), labeled.Sub(killedAt))
	assert.LessOrEqual(t, takeover.Sub(killedAt), killTakeoverBound, "takeover after SIGKILL")

	// A replacement, as the Deployment would start, so that a standby is
	// there for the next fault.
	g.start()

	// SIGTERM: the leader stops its controllers and releases the Lease.
	second := g.leader()
	mon.waitLeading(second)
	holder = lease.holder()
	require.NotEmpty(t, holder)
	termAt := time.Now()
	require.NoError(t, second.Signal(syscall.SIGTERM))
	createReplicaSets(t, cs, ns, "after-term", 1, 1)
	takeover = lease.waitHolderOtherThan(t, termAt, holder, termTakeoverBound+10*time.Second)
	released, ok := lease.releasedBetween(termAt, takeover)
	labeled = waitLabeled(t, cs, ns, "after-term-0000", 30*time.Second)
	assert.Equal(t, 0, second.Wait(t, failoverShutdownTimeout+2*time.Second), "exit code after SIGTERM")
	g.forget(second)
	if assert.True(t, ok, "the SIGTERMed leader released the Lease (holder emptied) before another took it") {
		figure(t, fmt.Sprintf("failover-%d-replicas-sigterm-release", n), released.Sub(termAt))
		// The webhook server drains for its shutdown delay (1s by
		// default) only after the Lease is released.
		assert.Less(t, released.Sub(termAt), time.Second, "the Lease is released before the webhook server drains")
	}
	figure(t, fmt.Sprintf("failover-%d-replicas-sigterm-takeover", n), takeover.Sub(termAt))
	figure(t, fmt.Sprintf("failover-%d-replicas-sigterm-first-label", n), labeled.Sub(termAt))
	figure(t, fmt.Sprintf("failover-%d-replicas-sigterm-exit", n), second.ExitedAt().Sub(termAt))
	assert.Less(t, takeover.Sub(termAt), termTakeoverBound, "takeover after SIGTERM")

	// The new leader keeps going: everything trickled in is labeled.
	created := trickle.stop()
	waitAllLabeled(t, cs, trickleNS, created, 30*time.Second)
	mon.waitLeading(g.leader())
	report := mon.stop()
	figure(t, fmt.Sprintf("failover-%d-replicas-fencing-samples", n), report.rounds)
	figure(t, fmt.Sprintf("failover-%d-replicas-leaders-in-turn", n), report.leaders)
	figure(t, fmt.Sprintf("failover-%d-replicas-max-simultaneous-leaders", n), report.maxLeaders)
	figure(t, fmt.Sprintf("failover-%d-replicas-reconciles-while-standby", n), report.standbyReconciles)
	figure(t, fmt.Sprintf("failover-%d-replicas-trickled-replicasets", n), created)
	assert.Equal(t, 1, report.maxLeaders, "never two leaders at once")
	assert.Zero(t, report.standbyReconciles, "reconciles only grow on the leader: %v", report.violations)
}

// group is the replicas of one test.
type group struct {
	t  *testing.T
	cp *controlplane.ControlPlane

	mu       sync.Mutex
	replicas []*operatorproc.Process
}

func (g *group) start() *operatorproc.Process {
	g.t.Helper()
	p := operatorproc.RunAgainst(g.t, operatorBin, g.cp,
		"--controllers=replicaset",
		"--leader-elect",
		"--leader-election-id="+leaseID,
		"--leader-election-namespace="+leaseNamespace,
		"--leader-election-lease-duration="+leaseDuration.String(),
		"--leader-election-renew-deadline="+renewDeadline.String(),
		"--leader-election-retry-period="+retryPeriod.String(),
		"--shutdown-timeout="+failoverShutdownTimeout.String(),
	)
	g.mu.Lock()
	defer g.mu.Unlock()
	g.replicas = append(g.replicas, p)
	return p
}

func (g *group) forget(p *operatorproc.Process) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.replicas = slices.DeleteFunc(g.replicas, func(q *operatorproc.Process) bool { return q == p })
}

func (g *group) live() []*operatorproc.Process {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.replicas)
}

// leader waits until exactly one replica reports leading, and returns it.
func (g *group) leader() *operatorproc.Process {
	g.t.Helper()
	var leader *operatorproc.Process
	require.Eventually(g.t, func() bool {
		var leading []*operatorproc.Process
		for _, p := range g.live() {
			s, err := p.Scrape(masterStatus)
			if err == nil && s.Sum(masterStatus, map[string]string{"name": leaseID}) == 1 {
				leading = append(leading, p)
			}
		}
		if len(leading) != 1 {
			return false
		}
		leader = leading[0]
		return true
	}, 30*time.Second, 50*time.Millisecond, "exactly one replica leads")
	return leader
}

// waitLabeled waits for namespace/name to carry the label and returns when
// it was first seen so.
func waitLabeled(t *testing.T, cs kubernetes.Interface, namespace, name string, timeout time.Duration) time.Time {
	t.Helper()
	var at time.Time
	require.Eventually(t, func() bool {
		if !isLabeled(cs, namespace, name) {
			return false
		}
		at = time.Now()
		return true
	}, timeout, 20*time.Millisecond, "replicaset %s/%s labeled", namespace, name)
	return at
}

// leaseWatch records every change of the Lease as the test saw it.
type leaseWatch struct {
	mu      sync.Mutex
	changes []leaseChange
	cancel  context.CancelFunc
	done    chan struct{}
}

type leaseChange struct {
	at     time.Time
	holder string
}

// watchLease follows the Lease from its current version on; a watch is
// used rather than polling so that a release that lasts less than a poll
// interval is seen too.
func watchLease(t *testing.T, cs kubernetes.Interface) *leaseWatch {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	leases := cs.CoordinationV1().Leases(leaseNamespace)
	current, err := leases.Get(ctx, leaseID, metav1.GetOptions{})
	require.NoError(t, err)
	w, err := leases.Watch(ctx, metav1.ListOptions{
		FieldSelector:   fields.OneTermEqualSelector("metadata.name", leaseID).String(),
		ResourceVersion: current.ResourceVersion,
	})
	require.NoError(t, err)
	lw := &leaseWatch{cancel: cancel, done: make(chan struct{})}
	lw.record(current)
	go func() {
		defer close(lw.done)
		defer w.Stop()
		for ev := range w.ResultChan() {
			if l, ok := ev.Object.(*coordinationv1.Lease); ok && (ev.Type == watch.Added || ev.Type == watch.Modified) {
				lw.record(l)
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-lw.done
	})
	return lw
}

func (lw *leaseWatch) record(l *coordinationv1.Lease) {
	var holder string
	if l.Spec.HolderIdentity != nil {
		holder = *l.Spec.HolderIdentity
	}
	lw.mu.Lock()
	defer lw.mu.Unlock()
	if n := len(lw.changes); n > 0 && lw.changes[n-1].holder == holder {
		return // a renewal
	}
	lw.changes = append(lw.changes, leaseChange{at: time.Now(), holder: holder})
}

// holder is the latest holder seen.
func (lw *leaseWatch) holder() string {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	return lw.changes[len(lw.changes)-1].holder
}

// waitHolderOtherThan waits for a holder other than old (and not empty)
// seen after since, and returns when it was seen.
func (lw *leaseWatch) waitHolderOtherThan(t *testing.T, since time.Time, old string, timeout time.Duration) time.Time {
	t.Helper()
	var at time.Time
	require.Eventually(t, func() bool {
		lw.mu.Lock()
		defer lw.mu.Unlock()
		for _, c := range lw.changes {
			if c.at.After(since) && c.holder != "" && c.holder != old {
				at = c.at
				return true
			}
		}
		return false
	}, timeout, 10*time.Millisecond, "another replica holds the Lease")
	return at
}

// releasedBetween returns when the holder was seen emptied in (from, to].
func (lw *leaseWatch) releasedBetween(from, to time.Time) (time.Time, bool) {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	for _, c := range lw.changes {
		if c.at.After(from) && !c.at.After(to) && c.holder == "" {
			return c.at, true
		}
	}
	return time.Time{}, false
}

// monitor samples every replica's leader gauge and reconcile counter every
// 50 ms: the fencing probe.
type monitor struct {
	g      *group
	stopCh chan struct{}
	done   chan monitorReport
	once   sync.Once
	report monitorReport

	mu  sync.Mutex
	led map[*operatorproc.Process]bool // seen leading
}

// The metrics the monitor reads.
const (
	masterStatus   = "leader_election_master_status"
	reconcileTotal = "controller_runtime_reconcile_total"
)

type monitorReport struct {
	rounds            int
	maxLeaders        int
	leaders           int // distinct replicas seen leading
	standbyReconciles float64
	violations        []string
}

type replicaSample struct {
	leading    bool
	reconciles float64
}

func startMonitor(g *group) *monitor {
	m := &monitor{g: g, stopCh: make(chan struct{}), done: make(chan monitorReport, 1), led: map[*operatorproc.Process]bool{}}
	go m.run()
	g.t.Cleanup(func() { m.stop() })
	return m
}

// waitLeading waits until the monitor has sampled p leading, so that a
// fault injected next happens under its eyes.
func (m *monitor) waitLeading(p *operatorproc.Process) {
	m.g.t.Helper()
	require.Eventually(m.g.t, func() bool {
		m.mu.Lock()
		defer m.mu.Unlock()
		return m.led[p]
	}, 30*time.Second, 10*time.Millisecond, "the monitor saw pid %d leading", p.Pid())
}

func (m *monitor) run() {
	var r monitorReport
	last := map[*operatorproc.Process]replicaSample{}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for first := true; ; first = false {
		if !first {
			select {
			case <-m.stopCh:
				m.mu.Lock()
				r.leaders = len(m.led)
				m.mu.Unlock()
				m.done <- r
				return
			case <-tick.C:
			}
		}
		r.rounds++
		// Scraped together, so that one round is one moment.
		replicas := m.g.live()
		samples := make([]operatorproc.Samples, len(replicas))
		errs := make([]error, len(replicas))
		var wg sync.WaitGroup
		for i, p := range replicas {
			wg.Go(func() { samples[i], errs[i] = p.Scrape(masterStatus, reconcileTotal) })
		}
		wg.Wait()
		leaders := 0
		for i, p := range replicas {
			if errs[i] != nil {
				continue // killed, or not serving yet
			}
			s := samples[i]
			cur := replicaSample{
				leading:    s.Sum(masterStatus, map[string]string{"name": leaseID}) == 1,
				reconciles: s.Sum(reconcileTotal, map[string]string{"controller": "replicaset"}),
			}
			if cur.leading {
				leaders++
				m.mu.Lock()
				m.led[p] = true
				m.mu.Unlock()
			}
			// Controllers run only between the gauge going to 1 and back
			// to 0, so growth must be bracketed by a leading sample.
			if prev, ok := last[p]; ok && cur.reconciles > prev.reconciles && !prev.leading && !cur.leading {
				r.standbyReconciles += cur.reconciles - prev.reconciles
				r.violations = append(r.violations, fmt.Sprintf("round %d pid %d: %v -> %v", r.rounds, p.Pid(), prev.reconciles, cur.reconciles))
			}
			last[p] = cur
		}
		r.maxLeaders = max(r.maxLeaders, leaders)
	}
}

func (m *monitor) stop() monitorReport {
	m.once.Do(func() {
		close(m.stopCh)
		m.report = <-m.done
	})
	return m.report
}

// trickle creates a ReplicaSet every 100 ms until stopped, so that there
// is reconciling to do across every failover.
type trickle struct {
	stopCh  chan struct{}
	done    chan int
	once    sync.Once
	created int
}

func startTrickle(t *testing.T, cs kubernetes.Interface, namespace string) *trickle {
	tr := &trickle{stopCh: make(chan struct{}), done: make(chan int, 1)}
	go func() {
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		created := 0
		for {
			select {
			case <-tr.stopCh:
				tr.done <- created
				return
			case <-tick.C:
			}
			name := fmt.Sprintf("trickle-%04d", created)
			if _, err := cs.AppsV1().ReplicaSets(namespace).Create(context.Background(), replicaSet(namespace, name), metav1.CreateOptions{}); err != nil {
				t.Errorf("create replicaset %s/%s: %v", namespace, name, err)
				continue
			}
			created++
		}
	}()
	t.Cleanup(func() { tr.stop() })
	return tr
}

// stop ends the trickle and returns how many ReplicaSets it created.
func (tr *trickle) stop() int {
	tr.once.Do(func() {
		close(tr.stopCh)
		tr.created = <-tr.done
	})
	return tr.created
}
