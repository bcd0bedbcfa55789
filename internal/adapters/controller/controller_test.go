package controller_test

import (
	"context"
	"fmt"
	"regexp"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hexagonal-operator/operator/internal/adapters/controller"
	"github.com/hexagonal-operator/operator/internal/ports"
)

func waitClosed(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(waitFor):
		t.Fatalf("timed out waiting for %s", what)
	}
}

func receive[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(waitFor):
		t.Fatalf("timed out waiting for %s", what)
		var zero T
		return zero
	}
}

func reconcileTotal(t *testing.T, e *env, name string) float64 {
	t.Helper()
	sum := 0.0
	for _, r := range []string{"success", "error", "requeue_after", "requeue"} {
		sum += metric(t, e.reg, "controller_runtime_reconcile_total", "controller", name, "result", r)
	}
	return sum
}

func TestReconcileOutcomes(t *testing.T) {
	t.Parallel()
	type want struct {
		calls                                                             int
		success, errors, requeueAfter, requeue, terminal, panics, retries float64
	}
	tests := []struct {
		name string
		fn   func(ctx context.Context, req ports.Request, n int) (ports.Result, error)
		want want
	}{
		{
			name: "success is done",
			fn:   func(context.Context, ports.Request, int) (ports.Result, error) { return ports.Result{}, nil },
			want: want{calls: 1, success: 1},
		},
		{
			name: "requeue after comes back once",
			fn: func(_ context.Context, _ ports.Request, n int) (ports.Result, error) {
				if n == 1 {
					return ports.Result{RequeueAfter: 10 * time.Millisecond}, nil
				}
				return ports.Result{}, nil
			},
			want: want{calls: 2, requeueAfter: 1, success: 1, retries: 1},
		},
		{
			name: "errors are retried until success",
			fn: func(_ context.Context, _ ports.Request, n int) (ports.Result, error) {
				if n <= 2 {
					return ports.Result{}, errBoom
				}
				return ports.Result{}, nil
			},
			want: want{calls: 3, errors: 2, success: 1, retries: 2},
		},
		{
			name: "the result of a failed reconcile is ignored",
			fn: func(_ context.Context, _ ports.Request, n int) (ports.Result, error) {
				if n == 1 {
					return ports.Result{RequeueAfter: time.Hour}, errBoom
				}
				return ports.Result{}, nil
			},
			want: want{calls: 2, errors: 1, success: 1, retries: 1},
		},
		{
			name: "a conflict is retried without counting as an error",
			fn: func(_ context.Context, _ ports.Request, n int) (ports.Result, error) {
				if n == 1 {
					return ports.Result{}, fmt.Errorf("update thing: %w", ports.ErrConflict)
				}
				return ports.Result{}, nil
			},
			want: want{calls: 2, requeue: 1, success: 1, retries: 1},
		},
		{
			name: "a terminal conflict is an error",
			fn: func(context.Context, ports.Request, int) (ports.Result, error) {
				return ports.Result{}, ports.Terminal(ports.ErrConflict)
			},
			want: want{calls: 1, errors: 1, terminal: 1},
		},
		{
			name: "a terminal error is not retried",
			fn: func(context.Context, ports.Request, int) (ports.Result, error) {
				return ports.Result{}, ports.Terminal(errBoom)
			},
			want: want{calls: 1, errors: 1, terminal: 1},
		},
		{
			name: "a panic is an error and retried",
			fn: func(_ context.Context, _ ports.Request, n int) (ports.Result, error) {
				if n == 1 {
					panic("kaboom")
				}
				return ports.Result{}, nil
			},
			want: want{calls: 2, errors: 1, panics: 1, success: 1, retries: 1},
		},
		{
			name: "a panic carrying a terminal error is still retried",
			fn: func(_ context.Context, _ ports.Request, n int) (ports.Result, error) {
				if n == 1 {
					panic(ports.Terminal(errBoom))
				}
				return ports.Result{}, nil
			},
			want: want{calls: 2, errors: 1, panics: 1, success: 1, retries: 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv()
			src := newSource("Thing")
			r := newRecorder(tt.fn)
			c := build(t, e, "things", src, 2, controller.Options{}, r)
			start(t, c)

			src.add(object("ns", "a"))

			w := tt.want
			require.Eventually(t, func() bool { return reconcileTotal(t, e, "things") == float64(w.calls) }, waitFor, tick)
			ctl := []string{"controller", "things"}
			q := []string{"name", "things"}
			assert.Equal(t, w.calls, r.count(req("ns", "a")), "reconciles")
			assert.Equal(t, w.success, metric(t, e.reg, "controller_runtime_reconcile_total", "controller", "things", "result", "success"), "success")
			assert.Equal(t, w.errors, metric(t, e.reg, "controller_runtime_reconcile_total", "controller", "things", "result", "error"), "result error")
			assert.Equal(t, w.requeueAfter, metric(t, e.reg, "controller_runtime_reconcile_total", "controller", "things", "result", "requeue_after"), "requeue_after")
			assert.Equal(t, w.requeue, metric(t, e.reg, "controller_runtime_reconcile_total", "controller", "things", "result", "requeue"), "requeue")
			assert.Equal(t, w.errors, metric(t, e.reg, "controller_runtime_reconcile_errors_total", ctl...), "errors")
			assert.Equal(t, w.terminal, metric(t, e.reg, "controller_runtime_terminal_reconcile_errors_total", ctl...), "terminal")
			assert.Equal(t, w.panics, metric(t, e.reg, "controller_runtime_reconcile_panics_total", ctl...), "panics")
			assert.Equal(t, float64(w.calls), metric(t, e.reg, "controller_runtime_reconcile_time_seconds", ctl...), "timed reconciles")
			assert.Equal(t, w.retries, metric(t, e.reg, "workqueue_retries_total", q...), "retries")
			assert.Equal(t, float64(w.calls), metric(t, e.reg, "workqueue_adds_total", q...), "adds")
			assert.Zero(t, metric(t, e.reg, "workqueue_depth", q...), "depth")

			failed := e.logs.FilterMessage("reconcile failed").All()
			assert.Len(t, failed, int(w.errors), "one error line per failure")
			if w.panics > 0 {
				require.NotEmpty(t, failed)
				stack, _ := failed[0].ContextMap()["panicStack"].(string)
				assert.Contains(t, stack, "TestReconcileOutcomes", "the stack shows where the reconciler panicked")
			}
		})
	}
}

var uuidPattern = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

func TestReconcileLogsCarryRequestAndReconcileID(t *testing.T) {
	t.Parallel()
	e := newEnv()
	src := newSource("Thing")
	var (
		mu  sync.Mutex
		ids []string
	)
	r := newRecorder(func(ctx context.Context, _ ports.Request, n int) (ports.Result, error) {
		mu.Lock()
		ids = append(ids, controller.ReconcileIDFrom(ctx))
		mu.Unlock()
		controller.LoggerFrom(ctx).Info("inside")
		if n == 1 {
			return ports.Result{}, errBoom
		}
		return ports.Result{}, nil
	})
	c := build(t, e, "things", src, 1, controller.Options{}, r)
	start(t, c)

	src.add(object("ns", "a"))
	require.Eventually(t, func() bool {
		return metric(t, e.reg, "controller_runtime_reconcile_total", "controller", "things", "result", "success") == 1
	}, waitFor, tick)

	mu.Lock()
	defer mu.Unlock()
	require.Len(t, ids, 2)
	assert.NotEqual(t, ids[0], ids[1], "each reconcile has its own ID")
	for _, id := range ids {
		assert.Regexp(t, uuidPattern, id)
	}

	failed := e.logs.FilterMessage("reconcile failed").All()
	require.Len(t, failed, 1)
	assert.Subset(t, failed[0].ContextMap(), map[string]any{
		"controller": "things", "namespace": "ns", "name": "a", "reconcileID": ids[0], "error": "boom", "terminal": false,
	})
	inside := e.logs.FilterMessage("inside").All()
	require.Len(t, inside, 2)
	for i, entry := range inside {
		assert.Subset(t, entry.ContextMap(), map[string]any{
			"controller": "things", "namespace": "ns", "name": "a", "reconcileID": ids[i],
		})
	}

	assert.Empty(t, controller.ReconcileIDFrom(context.Background()))
	assert.NotNil(t, controller.LoggerFrom(context.Background()))
}

func TestWorkersWaitForEveryWatchedSource(t *testing.T) {
	t.Parallel()
	e := newEnv()
	parents, children := newSource("Parent"), newSource("Child")
	children.gate = newCacheSync(false)
	r := newRecorder(func(context.Context, ports.Request, int) (ports.Result, error) { return ports.Result{}, nil })
	c, err := newController("custom", e.deps, 2, r, forSource(parents), ownedBy(children, parents.kind))
	require.NoError(t, err)
	start(t, c)

	parents.add(object("ns", "a"))
	waitClosed(t, children.gate.waiting, "the owned source's WaitForSync")
	assert.Zero(t, r.total(), "no reconcile before every watched source synced")

	children.gate.sync()
	require.Eventually(t, func() bool { return r.total() == 1 }, waitFor, tick)
}

func TestWorkersWaitForCacheSyncThenLeadership(t *testing.T) {
	t.Parallel()
	e := newEnv()
	e.sync, e.leader = newCacheSync(false), newLeader(false)
	e.deps.LeaderElector = e.leader
	src := newSource("Thing")
	src.gate = e.sync
	var early atomic.Int32
	r := newRecorder(func(context.Context, ports.Request, int) (ports.Result, error) {
		if !e.sync.HasSynced() || !e.leader.isElected() {
			early.Add(1)
		}
		return ports.Result{}, nil
	})
	c := build(t, e, "things", src, 4, controller.Options{}, r)
	start(t, c)

	// Handlers are registered by Start itself: this event is queued, not
	// lost, while the controller waits.
	src.add(object("ns", "a"))
	waitClosed(t, e.sync.waiting, "WaitForSync")
	assert.Equal(t, 1.0, metric(t, e.reg, "workqueue_depth", "name", "things"))
	assert.Zero(t, r.total(), "no reconcile before the caches synced")

	e.sync.sync()
	waitClosed(t, e.leader.asked, "Elected")
	assert.Equal(t, 1.0, metric(t, e.reg, "workqueue_depth", "name", "things"))
	assert.Zero(t, r.total(), "no reconcile before leadership")

	e.leader.elect()
	require.Eventually(t, func() bool { return r.total() == 1 }, waitFor, tick)
	assert.Zero(t, early.Load(), "reconciled before sync and leadership")
}

func TestSameRequestIsNeverReconciledConcurrently(t *testing.T) {
	t.Parallel()
	const workers, keys, rounds, firers = 16, 4, 200, 4
	e := newEnv()
	src := newSource("Thing")
	var (
		mu                  sync.Mutex
		perKey              = map[ports.Request]int{}
		current, maxOverall int
		maxPerKey           int
	)
	r := newRecorder(func(_ context.Context, req ports.Request, _ int) (ports.Result, error) {
		mu.Lock()
		perKey[req]++
		current++
		maxPerKey = max(maxPerKey, perKey[req])
		maxOverall = max(maxOverall, current)
		mu.Unlock()
		time.Sleep(100 * time.Microsecond) // some work, so that reconciles overlap
		mu.Lock()
		perKey[req]--
		current--
		mu.Unlock()
		return ports.Result{}, nil
	})
	c := build(t, e, "things", src, workers, controller.Options{}, r)
	start(t, c)

	var wg sync.WaitGroup
	for range firers {
		wg.Go(func() {
			for range rounds {
				for k := range keys {
					o := object("ns", string(rune('a'+k)))
					src.update(o, o)
				}
			}
		})
	}
	wg.Wait()
	require.Eventually(t, func() bool {
		return metric(t, e.reg, "workqueue_depth", "name", "things") == 0 &&
			metric(t, e.reg, "controller_runtime_active_workers", "controller", "things") == 0
	}, waitFor, tick)

	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, 1, maxPerKey, "a request was reconciled by two workers at once")
	assert.Greater(t, maxOverall, 1, "workers never overlapped, so the test proves nothing")
	assert.Len(t, r.requests(), keys)
}

func TestReconcileTimeoutCancelsTheContext(t *testing.T) {
	t.Parallel()
	e := newEnv()
	src := newSource("Thing")
	type seen struct {
		err         error
		hasDeadline bool
	}
	got := make(chan seen, 1)
	r := newRecorder(func(ctx context.Context, _ ports.Request, _ int) (ports.Result, error) {
		_, ok := ctx.Deadline()
		<-ctx.Done()
		got <- seen{err: ctx.Err(), hasDeadline: ok}
		return ports.Result{}, ports.Terminal(ctx.Err())
	})
	c := build(t, e, "things", src, 1, controller.Options{ReconcileTimeout: 50 * time.Millisecond}, r)
	start(t, c)

	src.add(object("ns", "a"))
	s := receive(t, got, "the reconcile's context to end")
	assert.True(t, s.hasDeadline)
	assert.ErrorIs(t, s.err, context.DeadlineExceeded)
	require.Eventually(t, func() bool {
		return metric(t, e.reg, "controller_runtime_terminal_reconcile_errors_total", "controller", "things") == 1
	}, waitFor, tick)
	assert.Equal(t, 1.0, metric(t, e.reg, "controller_runtime_reconcile_timeouts_total", "controller", "things"))
}

func TestOnlyTheReconcilesOwnDeadlineCountsAsATimeout(t *testing.T) {
	t.Parallel()
	e := newEnv()
	src := newSource("Thing")
	// The reconciler gives up on a deadline of its own, shorter than the
	// controller's: not a reconcile timeout.
	r := newRecorder(func(ctx context.Context, _ ports.Request, _ int) (ports.Result, error) {
		ctx, cancel := context.WithTimeout(ctx, time.Millisecond)
		defer cancel()
		<-ctx.Done()
		return ports.Result{}, ports.Terminal(ctx.Err())
	})
	c := build(t, e, "things", src, 1, controller.Options{ReconcileTimeout: time.Hour}, r)
	start(t, c)

	src.add(object("ns", "a"))
	require.Eventually(t, func() bool {
		return metric(t, e.reg, "controller_runtime_terminal_reconcile_errors_total", "controller", "things") == 1
	}, waitFor, tick)
	assert.Zero(t, metric(t, e.reg, "controller_runtime_reconcile_timeouts_total", "controller", "things"))
}

func TestStopFinishesInFlightReconcilesAndDropsQueuedOnes(t *testing.T) {
	t.Parallel()
	e := newEnv()
	src := newSource("Thing")
	entered, release := make(chan struct{}), make(chan struct{})
	ctxErr := make(chan error, 1)
	var finished atomic.Bool
	r := newRecorder(func(ctx context.Context, req ports.Request, _ int) (ports.Result, error) {
		if req.Name == "a" {
			close(entered)
			<-release
			ctxErr <- ctx.Err()
			finished.Store(true)
		}
		return ports.Result{}, nil
	})
	c := build(t, e, "things", src, 1, controller.Options{}, r)
	require.NoError(t, c.Start(t.Context()))

	src.add(object("ns", "a"))
	waitClosed(t, entered, "the reconcile of ns/a")
	src.add(object("ns", "b")) // queued behind a: one worker
	assert.Equal(t, 1.0, metric(t, e.reg, "workqueue_depth", "name", "things"))
	assert.Equal(t, 1.0, metric(t, e.reg, "controller_runtime_active_workers", "controller", "things"))

	stopped := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitFor)
		defer cancel()
		stopped <- c.Stop(ctx)
	}()
	waitClosed(t, controller.StopRequested(c), "Stop to begin")
	select {
	case err := <-stopped:
		t.Fatalf("Stop returned (%v) while a reconcile was in flight", err)
	default:
	}

	close(release)
	require.NoError(t, receive(t, stopped, "Stop"))
	assert.True(t, finished.Load(), "Stop returned before the in-flight reconcile finished")
	assert.NoError(t, receive(t, ctxErr, "the reconcile's context"), "an in-flight reconcile is let finish, not cancelled")
	assert.Equal(t, 1, r.count(req("ns", "a")))
	assert.Zero(t, r.count(req("ns", "b")), "a request still queued at Stop was reconciled")
	assert.Equal(t, 1.0, metric(t, e.reg, "controller_runtime_reconcile_total", "controller", "things", "result", "success"))
}

func TestStopReportsReconcilesThatIgnoreTheirContext(t *testing.T) {
	t.Parallel()
	e := newEnv()
	src := newSource("Thing")
	entered, release := make(chan struct{}), make(chan struct{})
	ctxErr := make(chan error, 1)
	r := newRecorder(func(ctx context.Context, _ ports.Request, _ int) (ports.Result, error) {
		close(entered)
		<-release // ignores ctx
		ctxErr <- ctx.Err()
		return ports.Result{}, nil
	})
	c := build(t, e, "stuck", src, 1, controller.Options{ReconcileTimeout: time.Hour}, r)
	require.NoError(t, c.Start(t.Context()))
	src.add(object("ns", "a"))
	waitClosed(t, entered, "the reconcile")

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err := c.Stop(ctx)
	require.Error(t, err)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Contains(t, err.Error(), `"stuck"`)
	assert.Contains(t, err.Error(), "ns/a")

	close(release)
	assert.ErrorIs(t, receive(t, ctxErr, "the reconcile to end"), context.Canceled,
		"a reconcile still running at the stop deadline has its context cancelled")
	ctx2, cancel2 := context.WithTimeout(context.Background(), waitFor)
	defer cancel2()
	assert.NoError(t, c.Stop(ctx2), "a later Stop waits for what was left")
	assert.Zero(t, metric(t, e.reg, "controller_runtime_reconcile_timeouts_total", "controller", "stuck"), "a stop is not a timeout")
}

func TestLifecycle(t *testing.T) {
	t.Parallel()
	stopCtx := func(t *testing.T) context.Context {
		ctx, cancel := context.WithTimeout(context.Background(), waitFor)
		t.Cleanup(cancel)
		return ctx
	}
	tests := []struct {
		name string
		run  func(t *testing.T, e *env, src *fakeSource, c *controller.Controller)
	}{
		{"stop without start", func(t *testing.T, _ *env, _ *fakeSource, c *controller.Controller) {
			require.NoError(t, c.Stop(stopCtx(t)))
			require.NoError(t, c.Stop(stopCtx(t)))
			assert.ErrorContains(t, c.Start(t.Context()), "already stopped")
		}},
		{"stop without start, with an expired context", func(t *testing.T, _ *env, _ *fakeSource, c *controller.Controller) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			require.NoError(t, c.Stop(ctx), "nothing runs, so nothing is late")
		}},
		{"start twice", func(t *testing.T, _ *env, _ *fakeSource, c *controller.Controller) {
			require.NoError(t, c.Start(t.Context()))
			assert.ErrorContains(t, c.Start(t.Context()), "already started")
			require.NoError(t, c.Stop(stopCtx(t)))
		}},
		{"concurrent stops", func(t *testing.T, _ *env, _ *fakeSource, c *controller.Controller) {
			require.NoError(t, c.Start(t.Context()))
			errs := make(chan error, 4)
			for range 4 {
				go func() { errs <- c.Stop(stopCtx(t)) }()
			}
			for range 4 {
				assert.NoError(t, receive(t, errs, "Stop"))
			}
		}},
		{"stop while waiting for the caches", func(t *testing.T, e *env, src *fakeSource, _ *controller.Controller) {
			e.sync = newCacheSync(false)
			src.gate = e.sync
			c := rebuild(t, e, src)
			require.NoError(t, c.Start(t.Context()))
			src.add(object("ns", "a"))
			waitClosed(t, e.sync.waiting, "WaitForSync")
			require.NoError(t, c.Stop(stopCtx(t)))
		}},
		{"stop while waiting for leadership", func(t *testing.T, e *env, src *fakeSource, _ *controller.Controller) {
			e.leader = newLeader(false)
			c := rebuild(t, e, src)
			require.NoError(t, c.Start(t.Context()))
			src.add(object("ns", "a"))
			waitClosed(t, e.leader.asked, "Elected")
			require.NoError(t, c.Stop(stopCtx(t)))
		}},
		{"a source that refuses the handler", func(t *testing.T, _ *env, src *fakeSource, c *controller.Controller) {
			src.addErr = errBoom
			err := c.Start(t.Context())
			require.ErrorIs(t, err, errBoom)
			assert.Contains(t, err.Error(), "Thing")
			require.NoError(t, c.Stop(stopCtx(t)))
		}},
		{"events after stop are ignored", func(t *testing.T, e *env, src *fakeSource, c *controller.Controller) {
			require.NoError(t, c.Start(t.Context()))
			require.NoError(t, c.Stop(stopCtx(t)))
			src.add(object("ns", "late"))
			assert.Zero(t, metric(t, e.reg, "workqueue_adds_total", "name", "things"))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv()
			src := newSource("Thing")
			tt.run(t, e, src, rebuild(t, e, src))
		})
	}
}

// rebuild makes a fresh controller on e (after a test changed e's gates),
// on a fresh registry.
func rebuild(t *testing.T, e *env, src *fakeSource) *controller.Controller {
	t.Helper()
	fresh := newEnv()
	e.reg, e.logs = fresh.reg, fresh.logs
	e.deps.Registerer, e.deps.Logger = fresh.reg, fresh.deps.Logger
	e.deps.LeaderElector = e.leader
	return build(t, e, "things", src, 2, controller.Options{}, newRecorder(nil))
}
