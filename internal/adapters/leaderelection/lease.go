package leaderelection

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
)

// The algorithm is client-go's tools/leaderelection with a Lease lock and
// ReleaseOnCancel, rewritten on kubeclient so that the binary does not link
// client-go's clientset: replicas that mix this elector and client-go's
// (controller-runtime's) on one Lease agree on who leads.

// record is what a Lease says about its holder: client-go's
// LeaderElectionRecord.
type record struct {
	holder               string
	leaseDurationSeconds int
	acquireTime          time.Time
	renewTime            time.Time
	transitions          int
	// Coordinated leader election's fields, which this elector does not
	// use: read only so that a change of them is a change of the record.
	preferredHolder string
	strategy        coordinationv1.CoordinatedLeaseStrategy
}

func recordOf(spec *coordinationv1.LeaseSpec) record {
	var r record
	if spec.HolderIdentity != nil {
		r.holder = *spec.HolderIdentity
	}
	if spec.LeaseDurationSeconds != nil {
		r.leaseDurationSeconds = int(*spec.LeaseDurationSeconds)
	}
	if spec.AcquireTime != nil {
		r.acquireTime = spec.AcquireTime.Time
	}
	if spec.RenewTime != nil {
		r.renewTime = spec.RenewTime.Time
	}
	if spec.LeaseTransitions != nil {
		r.transitions = int(*spec.LeaseTransitions)
	}
	if spec.PreferredHolder != nil {
		r.preferredHolder = *spec.PreferredHolder
	}
	if spec.Strategy != nil {
		r.strategy = *spec.Strategy
	}
	return r
}

// spec writes every field, the holder even when empty (a released Lease),
// as client-go does.
func (r record) spec() coordinationv1.LeaseSpec {
	holder := r.holder
	duration, transitions := int32(r.leaseDurationSeconds), int32(r.transitions)
	s := coordinationv1.LeaseSpec{
		HolderIdentity:       &holder,
		LeaseDurationSeconds: &duration,
		AcquireTime:          &metav1.MicroTime{Time: r.acquireTime},
		RenewTime:            &metav1.MicroTime{Time: r.renewTime},
		LeaseTransitions:     &transitions,
	}
	if r.preferredHolder != "" {
		p := r.preferredHolder
		s.PreferredHolder = &p
	}
	if r.strategy != "" {
		st := r.strategy
		s.Strategy = &st
	}
	return s
}

// sameAs compares as client-go does, which compares the records' JSON
// encodings: times to the second. So a standby notices a renewal only when
// the renew time's second changes, which is why the lease duration must be
// at least two seconds.
func (r record) sameAs(o record) bool {
	return r.holder == o.holder &&
		r.leaseDurationSeconds == o.leaseDurationSeconds &&
		r.acquireTime.Unix() == o.acquireTime.Unix() &&
		r.renewTime.Unix() == o.renewTime.Unix() &&
		r.transitions == o.transitions &&
		r.preferredHolder == o.preferredHolder &&
		r.strategy == o.strategy
}

// campaign acquires the Lease, then renews it until ctx ends or a renewal
// fails, then releases it. It returns only then, having called
// stoppedLeading last.
func (e *Elector) campaign(ctx context.Context) {
	defer e.stoppedLeading()
	if !e.acquire(ctx) {
		return // stopped
	}
	// Acquired as Stop came: the Lease is released below without this
	// replica ever having led.
	if ctx.Err() == nil {
		e.startedLeading()
	}
	e.renew(ctx)
}

// acquire tries every RetryPeriod, jittered, until it holds the Lease
// (true) or ctx ends (false).
func (e *Elector) acquire(ctx context.Context) bool {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	succeeded := false
	wait.JitterUntilWithContext(ctx, func(ctx context.Context) {
		succeeded = e.tryAcquireOrRenew(ctx)
		if succeeded {
			cancel()
		}
	}, e.opts.RetryPeriod, JitterFactor, true)
	return succeeded
}

// renew renews the Lease every RetryPeriod. A renewal retries every
// RetryPeriod for at most RenewDeadline, each try's requests bounded by
// what is left of it; a renewal that has not succeeded by then means
// leadership is lost. Either way, it then releases the Lease.
func (e *Elector) renew(ctx context.Context) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	wait.UntilWithContext(ctx, func(ctx context.Context) {
		err := wait.PollUntilContextTimeout(ctx, e.opts.RetryPeriod, e.opts.RenewDeadline, true, func(ctx context.Context) (bool, error) {
			if err := ctx.Err(); err != nil {
				return false, err
			}
			return e.tryAcquireOrRenew(ctx), nil
		})
		if err == nil {
			return
		}
		if ctx.Err() == nil { // not stopping
			e.log.Info("failed to renew lease", zap.Error(err))
		}
		cancel()
	}, e.opts.RetryPeriod)
	e.release()
}

// tryAcquireOrRenew makes one attempt to take or keep the Lease and
// reports whether this replica holds it now.
func (e *Elector) tryAcquireOrRenew(ctx context.Context) bool {
	now := e.clock.Now()
	want := record{
		holder:               e.opts.Identity,
		leaseDurationSeconds: int(e.opts.LeaseDuration / time.Second),
		acquireTime:          now,
		renewTime:            now,
	}

	// Fast path: still ours as far as we know, so write over the Lease as
	// we last had it; its resourceVersion makes the update fail if anyone
	// wrote in between, and the slow path finds out who.
	if e.isLeader() && e.isLeaseValid(now) {
		old := e.observedRecord()
		want.acquireTime, want.transitions = old.acquireTime, old.transitions
		err := e.update(ctx, want)
		if err == nil {
			e.setObserved(want)
			return true
		}
		e.log.Debug("optimistic lease update failed, rereading", zap.Error(err))
	}

	cur, err := e.get(ctx)
	if err != nil {
		if !apierrors.IsNotFound(err) {
			e.log.Error("get lease failed", zap.Error(err))
			return false
		}
		if err := e.create(ctx, want); err != nil {
			e.log.Error("create lease failed", zap.Error(err))
			return false
		}
		e.setObserved(want)
		return true
	}
	if e.read == nil || !e.read.sameAs(cur) {
		e.setObserved(cur)
		e.read = &cur
	}
	if cur.holder != "" && e.isLeaseValid(now) && !e.isLeader() {
		e.log.Debug("lease held by another replica", zap.String("holder", cur.holder))
		return false
	}
	if e.isLeader() {
		// Still ours after the reread: the slow path of a renewal.
		want.acquireTime, want.transitions = cur.acquireTime, cur.transitions
		e.slowpath.Inc()
	} else {
		want.transitions = cur.transitions + 1
	}
	if err := e.update(ctx, want); err != nil {
		e.log.Error("update lease failed", zap.Error(err))
		return false
	}
	e.setObserved(want)
	return true
}

// release hands the Lease over: an empty holder and a one-second duration,
// so that a standby takes it at its next try rather than waiting for it to
// expire. Safe because Stop runs after the controllers have stopped (fx
// stops in reverse start order).
func (e *Elector) release() {
	ctx, cancel := context.WithTimeout(context.Background(), e.opts.RenewDeadline)
	defer cancel()
	for {
		cur, err := e.get(ctx)
		switch {
		case apierrors.IsNotFound(err):
			e.log.Info("lease not found on release")
			return
		case err != nil:
			e.log.Error("release lease failed", zap.Error(err))
			return
		}
		// client-go looks only at what it last observed; the holder read
		// just now is checked too, so that a replica that lost the Lease
		// while the API server was out of reach never releases its
		// successor's.
		if !e.isLeader() || cur.holder != e.opts.Identity {
			return
		}
		now := e.clock.Now()
		released := record{leaseDurationSeconds: 1, acquireTime: now, renewTime: now, transitions: cur.transitions}
		err = e.update(ctx, released)
		if err == nil {
			e.setObserved(released)
			return
		}
		if !apierrors.IsConflict(err) {
			e.log.Error("release lease failed", zap.Error(err))
			return
		}
		// Written in between (by this replica's own late renewal, or
		// metadata): read again, until the deadline.
	}
}

// get reads the Lease, keeping it for the next update.
func (e *Elector) get(ctx context.Context) (record, error) {
	lease, err := e.leases.Get(ctx, e.opts.ID, metav1.GetOptions{})
	if err != nil {
		return record{}, fmt.Errorf("get lease %s/%s: %w", e.opts.Namespace, e.opts.ID, err)
	}
	e.lease = lease
	return recordOf(&lease.Spec), nil
}

func (e *Elector) create(ctx context.Context, r record) error {
	lease, err := e.leases.Create(ctx, &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.opts.Namespace, Name: e.opts.ID},
		Spec:       r.spec(),
	}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("create lease %s/%s: %w", e.opts.Namespace, e.opts.ID, err)
	}
	e.lease = lease
	return nil
}

// update writes r over the Lease as last read or written, with its
// resourceVersion: a Conflict means someone else wrote since.
func (e *Elector) update(ctx context.Context, r record) error {
	if e.lease == nil {
		return errors.New("lease not read yet")
	}
	lease := e.lease.DeepCopy()
	lease.Spec = r.spec()
	lease, err := e.leases.Update(ctx, lease, metav1.UpdateOptions{})
	if err != nil {
		return fmt.Errorf("update lease %s/%s: %w", e.opts.Namespace, e.opts.ID, err)
	}
	e.lease = lease
	return nil
}

// isLeader reports whether the Lease was ours when last observed.
func (e *Elector) isLeader() bool {
	return e.observedRecord().holder == e.opts.Identity
}

// isLeaseValid reports whether the observed lease runs past now, counted
// from when we observed it.
func (e *Elector) isLeaseValid(now time.Time) bool {
	e.observedMu.RLock()
	defer e.observedMu.RUnlock()
	return e.observedTime.Add(time.Duration(e.observed.leaseDurationSeconds) * time.Second).After(now)
}

func (e *Elector) observedRecord() record {
	e.observedMu.RLock()
	defer e.observedMu.RUnlock()
	return e.observed
}

func (e *Elector) setObserved(r record) {
	e.observedMu.Lock()
	defer e.observedMu.Unlock()
	e.observed, e.observedTime = r, e.clock.Now()
}

// check fails when the Lease is ours but has not been renewed for
// tolerance past its duration, as client-go's LeaderElector.Check.
func (e *Elector) check(tolerance time.Duration) error {
	if !e.isLeader() {
		return nil
	}
	e.observedMu.RLock()
	last := e.observedTime
	e.observedMu.RUnlock()
	if e.clock.Since(last) > e.opts.LeaseDuration+tolerance {
		return fmt.Errorf("failed election to renew leadership on lease %s", e.opts.ID)
	}
	return nil
}
