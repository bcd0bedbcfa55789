package leaderelection

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zaptest"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/hexagonal-operator/operator/internal/kubeclient"
)

// The Lease the tests share.
const (
	testNamespace = "ns"
	testID        = "lease"
)

var leaseGR = coordinationv1.Resource("leases")

// memLeases holds one Lease with an API server's optimistic concurrency:
// an update must carry the stored resourceVersion. client-go's fake
// clientset does not check it.
type memLeases struct {
	mu       sync.Mutex
	lease    *coordinationv1.Lease
	rv       int
	updates  int
	failWith func(*coordinationv1.Lease) error // when set and non-nil, fails an update
}

var _ kubeclient.LeaseInterface = (*memLeases)(nil)

func (m *memLeases) Get(_ context.Context, name string, _ metav1.GetOptions) (*coordinationv1.Lease, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.lease == nil || m.lease.Name != name {
		return nil, apierrors.NewNotFound(leaseGR, name)
	}
	return m.lease.DeepCopy(), nil
}

func (m *memLeases) Create(_ context.Context, l *coordinationv1.Lease, _ metav1.CreateOptions) (*coordinationv1.Lease, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.lease != nil {
		return nil, apierrors.NewAlreadyExists(leaseGR, l.Name)
	}
	m.store(l)
	return m.lease.DeepCopy(), nil
}

func (m *memLeases) Update(_ context.Context, l *coordinationv1.Lease, _ metav1.UpdateOptions) (*coordinationv1.Lease, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.lease == nil {
		return nil, apierrors.NewNotFound(leaseGR, l.Name)
	}
	if m.failWith != nil {
		if err := m.failWith(l); err != nil {
			return nil, err
		}
	}
	if l.ResourceVersion != m.lease.ResourceVersion {
		return nil, apierrors.NewConflict(leaseGR, l.Name, errors.New("the object has been modified"))
	}
	m.store(l)
	m.updates++
	return m.lease.DeepCopy(), nil
}

func (m *memLeases) store(l *coordinationv1.Lease) {
	m.rv++
	m.lease = l.DeepCopy()
	m.lease.ResourceVersion = strconv.Itoa(m.rv)
}

// write changes the stored Lease as another client would.
func (m *memLeases) write(t *testing.T, change func(*coordinationv1.Lease)) {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	l := m.lease.DeepCopy()
	if l == nil {
		l = &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: testNamespace, Name: testID}}
	}
	change(l)
	m.store(l)
}

func (m *memLeases) spec(t *testing.T) coordinationv1.LeaseSpec {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	require.NotNil(t, m.lease, "no lease")
	return *m.lease.Spec.DeepCopy()
}

func (m *memLeases) setFailure(f func(*coordinationv1.Lease) error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.failWith = f
}

func (m *memLeases) updateCount() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.updates
}

func (*memLeases) Delete(context.Context, string, metav1.DeleteOptions) error {
	return errors.New("not implemented")
}

func (*memLeases) List(context.Context, metav1.ListOptions) (*coordinationv1.LeaseList, error) {
	return nil, errors.New("not implemented")
}

func (*memLeases) Watch(context.Context, metav1.ListOptions) (watch.Interface, error) {
	return nil, errors.New("not implemented")
}

func (*memLeases) Patch(context.Context, string, types.PatchType, []byte, metav1.PatchOptions, ...string) (*coordinationv1.Lease, error) {
	return nil, errors.New("not implemented")
}

// leaseClient serves only Leases; anything else panics on the nil
// embedded Interface, which would be a bug in the elector.
type leaseClient struct {
	kubeclient.Interface
	leases *memLeases
}

func (c leaseClient) CoordinationV1() kubeclient.CoordinationV1Interface { return c }

func (c leaseClient) Leases(ns string) kubeclient.LeaseInterface {
	if ns != testNamespace {
		panic("lease in namespace " + ns)
	}
	return c.leases
}

// Test timings: lease 3s, renew deadline 2s, retry 200ms.
const (
	testLease   = 3 * time.Second
	testRenew   = 2 * time.Second
	testRetry   = 200 * time.Millisecond
	maxInterval = testRetry + time.Duration(JitterFactor*float64(testRetry))
)

func newTestElector(t *testing.T, leases *memLeases, identity string, onLost func()) *Elector {
	t.Helper()
	e, err := New(leaseClient{leases: leases}, prometheus.NewRegistry(), Options{
		Enabled: true, Namespace: testNamespace, ID: testID, Identity: identity,
		LeaseDuration: testLease, RenewDeadline: testRenew, RetryPeriod: testRetry,
		OnLost: onLost,
	}, zaptest.NewLogger(t).Named(identity))
	require.NoError(t, err)
	return e
}

// fakeTimed is an elector on a fake clock, for single tries.
func fakeTimed(t *testing.T, leases *memLeases, identity string, clk *clocktesting.FakeClock) *Elector {
	t.Helper()
	e := newTestElector(t, leases, identity, nil)
	e.clock = clk
	return e
}

// heldBy makes the Lease held by holder, renewed at renew by the holder's
// clock.
func heldBy(holder string, renew time.Time, transitions int32) func(*coordinationv1.Lease) {
	return func(l *coordinationv1.Lease) {
		l.Spec = coordinationv1.LeaseSpec{
			HolderIdentity:       ptr.To(holder),
			LeaseDurationSeconds: ptr.To(int32(testLease / time.Second)),
			AcquireTime:          &metav1.MicroTime{Time: renew.Add(-time.Hour)},
			RenewTime:            &metav1.MicroTime{Time: renew},
			LeaseTransitions:     ptr.To(transitions),
		}
	}
}

var epoch = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func TestTakeoverOnlyAfterObservedExpiry(t *testing.T) {
	t.Parallel()
	// The holder's clock says nothing: expiry is counted from when the
	// standby saw the record, whatever time the record carries.
	tests := []struct {
		name        string
		holderClock time.Duration // the holder's renew time, relative to ours
	}{
		{"holder clock in sync", 0},
		{"holder clock an hour behind", -time.Hour},
		{"holder clock an hour ahead", time.Hour},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			leases := &memLeases{}
			leases.write(t, heldBy("other", epoch.Add(tt.holderClock), 4))
			clk := clocktesting.NewFakeClock(epoch)
			e := fakeTimed(t, leases, "me", clk)
			ctx := context.Background()

			require.False(t, e.tryAcquireOrRenew(ctx), "took a fresh lease")
			clk.Step(testLease - time.Millisecond)
			require.False(t, e.tryAcquireOrRenew(ctx), "took the lease before it expired")
			assert.Equal(t, "other", *leases.spec(t).HolderIdentity)

			clk.Step(time.Millisecond)
			require.True(t, e.tryAcquireOrRenew(ctx), "did not take the expired lease")
			spec := leases.spec(t)
			assert.Equal(t, "me", *spec.HolderIdentity)
			assert.Equal(t, int32(5), *spec.LeaseTransitions)
			assert.Equal(t, int32(3), *spec.LeaseDurationSeconds)
			assert.True(t, spec.AcquireTime.Equal(&metav1.MicroTime{Time: clk.Now()}))
			assert.True(t, spec.RenewTime.Equal(&metav1.MicroTime{Time: clk.Now()}))
			assert.True(t, e.isLeader())
		})
	}
}

func TestRenewalsSeenPostponeTakeover(t *testing.T) {
	t.Parallel()
	leases := &memLeases{}
	leases.write(t, heldBy("other", epoch, 0))
	clk := clocktesting.NewFakeClock(epoch)
	e := fakeTimed(t, leases, "me", clk)
	ctx := context.Background()

	require.False(t, e.tryAcquireOrRenew(ctx))
	clk.Step(2 * time.Second)
	leases.write(t, heldBy("other", epoch.Add(2*time.Second), 0))
	require.False(t, e.tryAcquireOrRenew(ctx), "saw the renewal")
	// Past the first observation's expiry, not the renewal's.
	clk.Step(testLease - time.Millisecond)
	require.False(t, e.tryAcquireOrRenew(ctx), "took a lease renewed less than its duration ago")
	clk.Step(time.Millisecond)
	require.True(t, e.tryAcquireOrRenew(ctx))
	assert.Equal(t, "me", *leases.spec(t).HolderIdentity)
}

func TestConflictIsNotRenewal(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		write       func(*coordinationv1.Lease) // between two renewals
		wantRenewed bool
		wantHolder  string
	}{
		{
			name:       "another replica took the lease",
			write:      heldBy("other", epoch.Add(time.Second), 1),
			wantHolder: "other",
		},
		{
			// The reread shows the Lease still ours: renewed over the
			// new version, which keeps the other writer's change.
			name:        "metadata changed",
			write:       func(l *coordinationv1.Lease) { l.Labels = map[string]string{"team": "ops"} },
			wantRenewed: true,
			wantHolder:  "me",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			leases := &memLeases{}
			clk := clocktesting.NewFakeClock(epoch)
			e := fakeTimed(t, leases, "me", clk)
			ctx := context.Background()
			require.True(t, e.tryAcquireOrRenew(ctx))
			clk.Step(time.Second)
			leases.write(t, tt.write)
			before := leases.spec(t)

			clk.Step(time.Second)
			assert.Equal(t, tt.wantRenewed, e.tryAcquireOrRenew(ctx))
			assert.Equal(t, tt.wantRenewed, e.isLeader())
			spec := leases.spec(t)
			assert.Equal(t, tt.wantHolder, *spec.HolderIdentity)
			if tt.wantRenewed {
				assert.True(t, spec.RenewTime.Equal(&metav1.MicroTime{Time: clk.Now()}))
				assert.Equal(t, "ops", leases.lease.Labels["team"])
				assert.Equal(t, 1.0, testutil.ToFloat64(e.slowpath), "a renewal through the slow path")
			} else {
				assert.Equal(t, before, spec, "overwrote the other replica's lease")
				assert.Zero(t, testutil.ToFloat64(e.slowpath), "losing the lease is no slow-path renewal")
			}
		})
	}
}

func TestConflictingUpdateLeavesLeaseAlone(t *testing.T) {
	t.Parallel()
	leases := &memLeases{}
	clk := clocktesting.NewFakeClock(epoch)
	e := fakeTimed(t, leases, "me", clk)
	ctx := context.Background()
	require.True(t, e.tryAcquireOrRenew(ctx))
	leases.setFailure(func(l *coordinationv1.Lease) error {
		return apierrors.NewConflict(leaseGR, l.Name, errors.New("the object has been modified"))
	})

	clk.Step(time.Second)
	assert.False(t, e.tryAcquireOrRenew(ctx))
	spec := leases.spec(t)
	assert.True(t, spec.RenewTime.Equal(&metav1.MicroTime{Time: epoch}), "renew time moved: %v", spec.RenewTime)
	assert.Equal(t, 0, leases.updateCount())
}

func TestLeaseTransitions(t *testing.T) {
	t.Parallel()
	leases := &memLeases{}
	clk := clocktesting.NewFakeClock(epoch)
	a := fakeTimed(t, leases, "a", clk)
	b := fakeTimed(t, leases, "b", clk)
	ctx := context.Background()

	type want struct {
		holder      string
		transitions int32
		duration    int32
		acquired    time.Time
	}
	check := func(step string, w want) {
		t.Helper()
		spec := leases.spec(t)
		assert.Equal(t, w.holder, *spec.HolderIdentity, step)
		assert.Equal(t, w.transitions, *spec.LeaseTransitions, step)
		assert.Equal(t, w.duration, *spec.LeaseDurationSeconds, step)
		assert.True(t, spec.AcquireTime.Equal(&metav1.MicroTime{Time: w.acquired}), "%s: acquired %v", step, spec.AcquireTime)
	}

	require.True(t, a.tryAcquireOrRenew(ctx))
	check("created", want{"a", 0, 3, epoch})

	clk.Step(time.Second)
	require.True(t, a.tryAcquireOrRenew(ctx))
	check("renewed", want{"a", 0, 3, epoch})
	require.False(t, b.tryAcquireOrRenew(ctx))

	clk.Step(testLease) // a stops renewing; b saw it a lease ago
	require.True(t, b.tryAcquireOrRenew(ctx))
	taken := clk.Now()
	check("taken over", want{"b", 1, 3, taken})

	require.False(t, a.tryAcquireOrRenew(ctx), "the old leader took the lease back")
	assert.False(t, a.isLeader())
	check("old leader rereads", want{"b", 1, 3, taken})

	clk.Step(time.Second)
	b.release()
	released := clk.Now()
	check("released", want{"", 1, 1, released})
	assert.True(t, leases.spec(t).RenewTime.Equal(&metav1.MicroTime{Time: released}))
	assert.False(t, b.isLeader())

	require.True(t, a.tryAcquireOrRenew(ctx), "a released lease is free at once")
	check("acquired after release", want{"a", 2, 3, released})
}

func TestReleaseLeavesAnotherHoldersLease(t *testing.T) {
	t.Parallel()
	leases := &memLeases{}
	clk := clocktesting.NewFakeClock(epoch)
	e := fakeTimed(t, leases, "me", clk)
	require.True(t, e.tryAcquireOrRenew(context.Background()))
	// Taken over while this replica could not reach the API server.
	leases.write(t, heldBy("other", epoch.Add(5*time.Second), 1))
	before := leases.spec(t)

	e.release()
	assert.Equal(t, before, leases.spec(t))
}

func TestCheck(t *testing.T) {
	t.Parallel()
	leases := &memLeases{}
	clk := clocktesting.NewFakeClock(epoch)
	leader := fakeTimed(t, leases, "leader", clk)
	standby := fakeTimed(t, leases, "standby", clk)
	ctx := context.Background()
	require.True(t, leader.tryAcquireOrRenew(ctx))
	require.False(t, standby.tryAcquireOrRenew(ctx))

	clk.Step(testLease + healthTolerance)
	require.NoError(t, leader.Check(ctx), "failed at the edge of the tolerance")
	clk.Step(time.Millisecond)
	err := leader.Check(ctx)
	require.Error(t, err, "a leader that did not renew for its lease and the tolerance is healthy")
	assert.Contains(t, err.Error(), "failed election to renew leadership on lease "+testID)
	assert.NoError(t, standby.Check(ctx), "a standby is always healthy")

	require.True(t, leader.tryAcquireOrRenew(ctx))
	assert.NoError(t, leader.Check(ctx), "renewing did not make the leader healthy again")
}

func waitElected(t *testing.T, e *Elector, within time.Duration) {
	t.Helper()
	select {
	case <-e.Elected():
	case <-time.After(within):
		t.Fatalf("%s not elected within %s", e.Identity(), within)
	}
}

func stopT(t *testing.T, e *Elector) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, e.Stop(ctx))
}

func TestRenewFailureCallsOnLostOnce(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		fail func(*coordinationv1.Lease) error
	}{
		{"api server unreachable", func(*coordinationv1.Lease) error { return errors.New("connection refused") }},
		{"every renewal conflicts", func(l *coordinationv1.Lease) error {
			if ptr.Deref(l.Spec.HolderIdentity, "") == "" {
				return nil // the release
			}
			return apierrors.NewConflict(leaseGR, l.Name, errors.New("the object has been modified"))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			leases := &memLeases{}
			var lost atomic.Int32
			e := newTestElector(t, leases, "me", func() { lost.Add(1) })
			require.NoError(t, e.Start(context.Background()))
			t.Cleanup(func() { stopT(t, e) })
			waitElected(t, e, 5*time.Second)
			require.True(t, e.IsLeader())

			leases.setFailure(tt.fail)
			broken := time.Now()
			require.Eventually(t, func() bool { return lost.Load() > 0 }, 5*time.Second, 10*time.Millisecond)
			assert.GreaterOrEqual(t, time.Since(broken), testRenew-testRetry, "gave up before the renew deadline")
			assert.False(t, e.IsLeader())
			select {
			case <-e.done:
			case <-time.After(5 * time.Second):
				t.Fatal("the campaign did not return after losing the lease")
			}
			assert.Equal(t, int32(1), lost.Load())
		})
	}
}

func TestStopReleasesForStandby(t *testing.T) {
	t.Parallel()
	leases := &memLeases{}
	a := newTestElector(t, leases, "a", nil)
	b := newTestElector(t, leases, "b", nil)
	require.NoError(t, a.Start(context.Background()))
	waitElected(t, a, 5*time.Second)
	require.NoError(t, b.Start(context.Background()))
	t.Cleanup(func() { stopT(t, b) })
	// b has seen a's lease (and will wait out its duration, if not told).
	require.Eventually(t, func() bool { return b.observedRecord().holder == "a" }, 5*time.Second, 10*time.Millisecond)

	stopT(t, a)
	stopped := time.Now()
	spec := leases.spec(t)
	assert.Empty(t, *spec.HolderIdentity)
	assert.Equal(t, int32(1), *spec.LeaseDurationSeconds)
	assert.Equal(t, int32(0), *spec.LeaseTransitions)
	assert.False(t, a.IsLeader())

	waitElected(t, b, 5*time.Second)
	// By expiry, b would have needed most of the 3s lease.
	assert.Less(t, time.Since(stopped), maxInterval+500*time.Millisecond, "took over by expiry, not by release")
	spec = leases.spec(t)
	assert.Equal(t, "b", *spec.HolderIdentity)
	assert.Equal(t, int32(1), *spec.LeaseTransitions)
}

func TestStandbyStopLeavesLease(t *testing.T) {
	t.Parallel()
	leases := &memLeases{}
	a := newTestElector(t, leases, "a", nil)
	b := newTestElector(t, leases, "b", nil)
	require.NoError(t, a.Start(context.Background()))
	t.Cleanup(func() { stopT(t, a) })
	waitElected(t, a, 5*time.Second)
	require.NoError(t, b.Start(context.Background()))
	require.Eventually(t, func() bool { return b.observedRecord().holder == "a" }, 5*time.Second, 10*time.Millisecond)

	stopT(t, b)
	assert.Equal(t, "a", *leases.spec(t).HolderIdentity)
	assert.True(t, a.IsLeader())
	assert.False(t, b.IsLeader())
	assert.False(t, isClosed(b.Elected()))
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func TestSlowPathIsExposedFromZeroAndFastRenewalsSkipIt(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewPedanticRegistry()
	leases := &memLeases{}
	e, err := New(leaseClient{leases: leases}, reg, Options{
		Enabled: true, Namespace: testNamespace, ID: testID, Identity: "me",
		LeaseDuration: testLease, RenewDeadline: testRenew, RetryPeriod: testRetry,
	}, zaptest.NewLogger(t))
	require.NoError(t, err)
	clk := clocktesting.NewFakeClock(epoch)
	e.clock = clk
	slowpath := func() float64 {
		t.Helper()
		families, err := reg.Gather()
		require.NoError(t, err)
		for _, f := range families {
			if f.GetName() == "leader_election_slowpath_total" {
				require.Len(t, f.GetMetric(), 1)
				require.Equal(t, testID, f.GetMetric()[0].GetLabel()[0].GetValue())
				return f.GetMetric()[0].GetCounter().GetValue()
			}
		}
		t.Fatal("leader_election_slowpath_total missing")
		return 0
	}
	assert.Zero(t, slowpath())

	ctx := context.Background()
	require.True(t, e.tryAcquireOrRenew(ctx)) // acquired
	clk.Step(time.Second)
	require.True(t, e.tryAcquireOrRenew(ctx)) // renewed optimistically
	assert.Zero(t, slowpath())

	leases.write(t, func(l *coordinationv1.Lease) { l.Annotations = map[string]string{"touched": "yes"} })
	clk.Step(time.Second)
	require.True(t, e.tryAcquireOrRenew(ctx)) // conflict, reread, renewed
	assert.Equal(t, 1.0, slowpath())
}
