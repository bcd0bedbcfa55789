package controller_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hexagonal-operator/operator/internal/adapters/controller"
	"github.com/hexagonal-operator/operator/internal/ports"
)

func TestStuckCheckFailsWhileAReconcileOutlivesTheThreshold(t *testing.T) {
	t.Parallel()
	e := newEnv()
	src := newSource("Thing")
	entered, release := make(chan struct{}), make(chan struct{})
	r := newRecorder(func(_ context.Context, req ports.Request, _ int) (ports.Result, error) {
		if req.Name == "slow" {
			close(entered)
			<-release
		}
		return ports.Result{}, nil
	})
	c := build(t, e, "things", src, 2,
		controller.Options{ReconcileTimeout: time.Hour, StuckThreshold: 50 * time.Millisecond}, r)
	check := c.StuckCheck()
	assert.Equal(t, "controller-things", check.Name())
	require.NoError(t, check.Check(t.Context()), "healthy before start")
	start(t, c)

	src.add(object("ns", "fast"))
	require.Eventually(t, func() bool { return r.count(req("ns", "fast")) == 1 }, waitFor, tick)
	require.NoError(t, check.Check(t.Context()), "healthy after a quick reconcile")

	src.add(object("ns", "slow"))
	waitClosed(t, entered, "the slow reconcile")
	require.Eventually(t, func() bool { return check.Check(t.Context()) != nil }, waitFor, tick)
	err := check.Check(t.Context())
	assert.Contains(t, err.Error(), `"things"`)
	assert.Contains(t, err.Error(), "ns/slow")

	close(release)
	require.Eventually(t, func() bool { return check.Check(t.Context()) == nil }, waitFor, tick,
		"healthy again once the reconcile returned")
}

// TestAReconcileIgnoringItsDeadlineIsReported: the overrun is counted and
// logged once, with the request, while the reconcile still runs.
func TestAReconcileIgnoringItsDeadlineIsReported(t *testing.T) {
	t.Parallel()
	e := newEnv()
	src := newSource("Thing")
	release := make(chan struct{})
	r := newRecorder(func(_ context.Context, req ports.Request, _ int) (ports.Result, error) {
		if req.Name == "deaf" {
			<-release // ignores ctx
		}
		return ports.Result{}, nil
	})
	c := build(t, e, "deaf", src, 1, controller.Options{ReconcileTimeout: 20 * time.Millisecond}, r)
	start(t, c)
	defer close(release)

	src.add(object("ns", "deaf"))
	require.Eventually(t, func() bool {
		return metric(t, e.reg, "operator_reconcile_overruns_total", "controller", "deaf") == 1
	}, waitFor, tick)
	lines := e.logs.FilterMessage("reconcile ignores its deadline").All()
	require.Len(t, lines, 1)
	assert.Equal(t, "deaf", lines[0].ContextMap()["name"])
	assert.Equal(t, "ns", lines[0].ContextMap()["namespace"])
}
