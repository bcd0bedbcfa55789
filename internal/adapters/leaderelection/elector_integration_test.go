package leaderelection_test

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zaptest"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hexagonal-operator/operator/internal/adapters/leaderelection"
	"github.com/hexagonal-operator/operator/test/controlplane"
)

// TestHandOverOnRealAPIServer runs two electors on one Lease: one leads,
// and when it stops it releases the Lease so that the other takes over well
// before the lease duration would have run out.
func TestHandOverOnRealAPIServer(t *testing.T) {
	t.Parallel()
	cp := controlplane.StartT(t, controlplane.Options{})
	cs := cp.Clientset()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const ns, id = "operator-system", "hexagonal-operator-leader"
	require.NoError(t, cp.EnsureNamespace(ctx, ns))

	opts := func(identity string) leaderelection.Options {
		return leaderelection.Options{
			Enabled: true, Namespace: ns, ID: id, Identity: identity,
			// A lease duration long enough that a takeover within it can
			// only come from the release.
			LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 500 * time.Millisecond,
		}
	}
	regA, regB := prometheus.NewRegistry(), prometheus.NewRegistry()
	a, err := leaderelection.New(cs, regA, opts("replica-a"), zaptest.NewLogger(t).Named("a"))
	require.NoError(t, err)
	b, err := leaderelection.New(cs, regB, opts("replica-b"), zaptest.NewLogger(t).Named("b"))
	require.NoError(t, err)
	stop := func(e *leaderelection.Elector) {
		sctx, scancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer scancel()
		require.NoError(t, e.Stop(sctx))
	}
	t.Cleanup(func() { stop(a); stop(b) })

	require.NoError(t, a.Start(ctx))
	select {
	case <-a.Elected():
	case <-time.After(30 * time.Second):
		t.Fatal("the first replica was not elected")
	}
	require.NoError(t, b.Start(ctx))
	// b must see a's Lease before a goes away, or this proves nothing.
	require.Never(t, func() bool { return isClosed(b.Elected()) }, 2*time.Second, 50*time.Millisecond)
	assert.Equal(t, 1.0, status(t, regA, id))
	assert.Equal(t, 0.0, status(t, regB, id))
	holder := func() string {
		lease, err := cs.CoordinationV1().Leases(ns).Get(ctx, id, metav1.GetOptions{})
		require.NoError(t, err)
		return ptrValue(lease.Spec.HolderIdentity)
	}
	assert.Equal(t, "replica-a", holder())

	stop(a)
	stopped := time.Now()
	assert.Equal(t, 0.0, status(t, regA, id))
	select {
	case <-b.Elected():
	case <-time.After(10 * time.Second):
		t.Fatal("the standby did not take over after the leader released the Lease")
	}
	assert.Less(t, time.Since(stopped), 5*time.Second, "took over by expiry, not by release")
	assert.Equal(t, 1.0, status(t, regB, id))
	assert.Equal(t, "replica-b", holder())

	stop(b)
	assert.Equal(t, 0.0, status(t, regB, id))
	assert.Empty(t, holder(), "the last leader did not release the Lease")
}
