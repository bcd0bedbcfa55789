package controller

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"go.uber.org/zap"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/uuid"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/hexagonal-operator/operator/internal/adapters/controller/predicate"
	"github.com/hexagonal-operator/operator/internal/ports"
	"github.com/hexagonal-operator/operator/internal/writes"
)

// Source is one kind's change notifications, in the shape of
// controller-runtime's source.Kind: the cache's Resource satisfies it.
type Source interface {
	// GroupKind names the kind, as writers report their writes to
	// internal/writes.
	GroupKind() schema.GroupKind
	// AddEventHandler registers h; it receives every object already known
	// as an add, then every change. Objects are the cache's: not mutated.
	AddEventHandler(h toolscache.ResourceEventHandler) error
	// WaitForSync blocks until the source has delivered its initial list,
	// or ctx is done, or the source stopped (an error then).
	WaitForSync(ctx context.Context) error
	// HasApplied reports whether the source's cache holds the state at
	// resourceVersion or later (true when that cannot be told), so a
	// reconcile can wait to read its own writes.
	HasApplied(resourceVersion string) bool
}

// Watch connects a source: its events pass every predicate, then Map names
// the requests they cause.
type Watch struct {
	Source     Source
	Map        MapFunc
	Predicates []predicate.Predicate
}

// Config is one controller.
type Config struct {
	// Name labels the metrics and log lines; unique per metrics registry.
	Name string
	// Workers is how many requests are reconciled concurrently (≥ 1); one
	// request is never reconciled twice at once.
	Workers    int
	Watches    []Watch
	Reconciler ports.Reconciler
}

func (c Config) validate() error {
	var errs []error
	if c.Name == "" {
		errs = append(errs, errors.New("name is empty"))
	}
	if c.Workers < 1 {
		errs = append(errs, fmt.Errorf("workers is %d, want at least 1", c.Workers))
	}
	if len(c.Watches) == 0 {
		errs = append(errs, errors.New("nothing to watch"))
	}
	for i, w := range c.Watches {
		if w.Source == nil {
			errs = append(errs, fmt.Errorf("watch %d: source is nil", i))
		}
		if w.Map == nil {
			errs = append(errs, fmt.Errorf("watch %d: map function is nil", i))
		}
		if slices.Contains(w.Predicates, nil) {
			errs = append(errs, fmt.Errorf("watch %d: a predicate is nil", i))
		}
	}
	if c.Reconciler == nil {
		errs = append(errs, errors.New("reconciler is nil"))
	}
	return errors.Join(errs...)
}

type queue = workqueue.TypedRateLimitingInterface[ports.Request]

// newRateLimiter is the back-off of failed requests, client-go's controller
// default; one per queue, since it remembers failures per request.
var newRateLimiter = workqueue.DefaultTypedControllerRateLimiter[ports.Request]

type state int

const (
	stateNew state = iota
	stateStarted
	stateStopped
)

// Controller feeds a reconciler from its sources through a rate-limited work
// queue.
type Controller struct {
	name       string
	workers    int
	watches    []Watch
	reconciler ports.Reconciler
	leader     LeaderElector
	log        *zap.Logger
	opts       Options
	metrics    *reconcileMetrics
	queueMP    *queueMetrics
	ledger     *ledger

	mu       sync.Mutex // guards state and what Start creates
	state    state
	queue    queue
	cancel   context.CancelFunc // stops waiting for sync and leadership
	abort    context.CancelFunc // cancels the contexts of running reconciles
	stopping chan struct{}      // closed by Stop: workers take no new request
	running  sync.WaitGroup     // the goroutines Start spawned
	done     chan struct{}      // closed once running is done

	inflightMu sync.Mutex
	inflight   map[ports.Request]time.Time // when each reconcile began
}

// New checks cfg and deps and registers the controller's metrics; a name
// already used on deps.Registerer is an error. It starts nothing.
func New(cfg Config, deps Deps) (*Controller, error) {
	opts := deps.Options.withDefaults()
	if err := errors.Join(cfg.validate(), deps.validate(), opts.validate()); err != nil {
		return nil, fmt.Errorf("new controller %q: %w", cfg.Name, err)
	}
	m, err := newReconcileMetrics(deps.Registerer, cfg.Name)
	if err != nil {
		return nil, fmt.Errorf("new controller %q: %w", cfg.Name, err)
	}
	mp, err := newQueueMetrics(deps.Registerer)
	if err != nil {
		return nil, fmt.Errorf("new controller %q: %w", cfg.Name, err)
	}
	// Last, so that a controller that fails to build does not hold its name.
	if err := claimName(deps.Registerer, cfg.Name, cfg.Workers); err != nil {
		return nil, fmt.Errorf("new controller: %w", err)
	}
	mp.init(cfg.Name)
	return &Controller{
		name:       cfg.Name,
		workers:    cfg.Workers,
		watches:    slices.Clone(cfg.Watches),
		reconciler: cfg.Reconciler,
		leader:     deps.LeaderElector,
		log:        deps.Logger.Named("controller").With(zap.String("controller", cfg.Name)),
		opts:       opts,
		metrics:    m,
		queueMP:    mp,
		stopping:   make(chan struct{}),
		done:       make(chan struct{}),
		inflight:   map[ports.Request]time.Time{},
		ledger:     newLedger(freshnessOf(cfg.Watches)),
	}, nil
}

// Name is the controller's name.
func (c *Controller) Name() string { return c.name }

// Start registers the event handlers, so that events are queued from now
// on; in the background it waits for the caches and for leadership, then
// starts the workers, until Stop. Start may be called once, not after Stop.
func (c *Controller) Start(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch c.state {
	case stateStarted:
		return fmt.Errorf("start controller %q: already started", c.name)
	case stateStopped:
		return fmt.Errorf("start controller %q: already stopped", c.name)
	}

	q := workqueue.NewTypedRateLimitingQueueWithConfig(newRateLimiter(),
		workqueue.TypedRateLimitingQueueConfig[ports.Request]{Name: c.name, MetricsProvider: c.queueMP})
	for _, w := range c.watches {
		h := &eventHandler{mapFn: w.Map, predicate: predicate.And(w.Predicates...), queue: q}
		if err := w.Source.AddEventHandler(h); err != nil {
			q.ShutDown() // what handlers registered so far add is ignored
			c.state = stateStopped
			close(c.stopping)
			close(c.done)
			return fmt.Errorf("start controller %q: watch %s: %w", c.name, w.Source.GroupKind(), err)
		}
	}

	// The background work outlives ctx, which fx cancels, keeping its values.
	base := context.WithoutCancel(ctx)
	waitCtx, cancel := context.WithCancel(base)
	workCtx, abort := context.WithCancel(base)
	c.queue, c.cancel, c.abort, c.state = q, cancel, abort, stateStarted
	c.running.Add(1)
	go c.run(waitCtx, workCtx, q)
	return nil
}

// run waits for the gates, then starts the workers, counting them in
// c.running before it returns itself.
func (c *Controller) run(waitCtx, workCtx context.Context, q queue) {
	defer c.running.Done()
	c.log.Info("waiting for caches to sync")
	for _, w := range c.watches {
		if err := w.Source.WaitForSync(waitCtx); err != nil {
			return // stopped before the caches synced
		}
	}
	c.log.Info("waiting for leadership")
	select {
	case <-c.leader.Elected():
	case <-waitCtx.Done():
		return
	}
	if waitCtx.Err() != nil {
		return
	}
	c.log.Info("starting workers", zap.Int("workers", c.workers))
	c.running.Add(c.workers)
	for range c.workers {
		go c.worker(workCtx, q)
	}
}

// Stop makes the workers take no new request and waits for the reconciles
// in flight until ctx is done; then it cancels their contexts and returns
// an error naming the requests still running. Stop is safe to call more
// than once, concurrently, and without Start.
func (c *Controller) Stop(ctx context.Context) error {
	c.mu.Lock()
	if c.state != stateStopped {
		wasStarted := c.state == stateStarted
		c.state = stateStopped
		close(c.stopping)
		if wasStarted {
			c.cancel()
			c.queue.ShutDown() // ShutDownWithDrain would wait without a deadline
			abort := c.abort
			go func() {
				c.running.Wait()
				abort()
				close(c.done)
			}()
		} else {
			close(c.done)
		}
		c.log.Info("stopping")
	}
	abort := c.abort
	c.mu.Unlock()

	select {
	case <-c.done:
		return nil
	case <-ctx.Done():
	}
	select {
	case <-c.done: // both were ready; select picked at random
		return nil
	default:
	}
	if abort != nil {
		abort()
	}
	keys := c.inflightKeys()
	return fmt.Errorf("stop controller %q: %d reconciles still running (%v): %w", c.name, len(keys), keys, ctx.Err())
}

func (c *Controller) worker(ctx context.Context, q queue) {
	defer c.running.Done()
	for {
		req, shutdown := q.Get()
		if shutdown {
			return
		}
		select {
		case <-c.stopping:
			q.Done(req) // dropped: the next leader lists every object again
		default:
			c.process(ctx, q, req)
		}
	}
}

// process reconciles req once and decides, from the outcome, whether and
// when it comes back, as controller-runtime does.
func (c *Controller) process(ctx context.Context, q queue, req ports.Request) {
	defer q.Done(req)
	c.metrics.active.Inc()
	defer c.metrics.active.Dec()

	id := string(uuid.NewUUID())
	log := c.log.With(zap.String("namespace", req.Namespace), zap.String("name", req.Name), zap.String("reconcileID", id))
	c.setInflight(req, time.Now())
	defer c.setInflight(req, time.Time{})

	start := time.Now()
	res, err := c.reconcile(ctx, req, id, log)
	c.metrics.time.Observe(time.Since(start).Seconds())

	switch {
	case errors.Is(err, ports.ErrConflict) && !ports.IsTerminal(err):
		// Someone wrote the object after the cache was read: the retry
		// reads the newer version; not a failure to alert on.
		q.AddRateLimited(req)
		c.metrics.total[resultRequeue].Inc()
		log.Debug("reconcile conflicted, requeued", zap.Error(err))
	case err != nil:
		terminal := ports.IsTerminal(err)
		if terminal {
			q.Forget(req)
			c.metrics.terminal.Inc()
		} else {
			q.AddRateLimited(req)
		}
		c.metrics.errors.Inc()
		c.metrics.total[resultError].Inc()
		fields := []zap.Field{zap.Error(err), zap.Bool("terminal", terminal)}
		var p *panicError
		if errors.As(err, &p) {
			// Not "stacktrace", which zap adds itself to error lines.
			fields = append(fields, zap.ByteString("panicStack", p.stack))
		}
		log.Error("reconcile failed", fields...)
	case res.RequeueAfter > 0:
		q.Forget(req)
		q.AddAfter(req, res.RequeueAfter)
		c.metrics.total[resultRequeueAfter].Inc()
		log.Debug("reconcile done, requeued", zap.Duration("requeueAfter", res.RequeueAfter))
	default:
		q.Forget(req)
		c.metrics.total[resultSuccess].Inc()
		log.Debug("reconcile done")
	}
}

// reconcile calls the reconciler with a deadline, after the wait for the
// previous writes, and turns a panic into an error retried like any other.
func (c *Controller) reconcile(ctx context.Context, req ports.Request, id string, log *zap.Logger) (res ports.Result, err error) {
	ctx, cancel := context.WithTimeoutCause(ctx, c.opts.ReconcileTimeout, errReconcileTimeout)
	defer cancel()
	defer func() { // only the reconcile's own deadline, as controller-runtime counts
		if ctx.Err() == context.DeadlineExceeded && errors.Is(context.Cause(ctx), errReconcileTimeout) {
			c.metrics.timeouts.Inc()
		}
	}()
	ctx = withReconcile(ctx, id, log)
	// A reconcile well past its deadline ignores its context: report it
	// once, as it happens; the stuck check fails /healthz if it goes on.
	overrun := time.AfterFunc(c.opts.ReconcileTimeout+overrunGrace(c.opts.ReconcileTimeout), func() {
		c.metrics.overruns.Inc()
		log.Error("reconcile ignores its deadline", zap.Duration("timeout", c.opts.ReconcileTimeout))
	})
	defer overrun.Stop()
	defer func() {
		if r := recover(); r != nil {
			c.metrics.panics.Inc()
			res, err = ports.Result{}, &panicError{value: r, stack: debug.Stack()}
		}
	}()
	if !c.opts.DisableReadYourWrites {
		waited, err := c.ledger.await(ctx, req, c.opts.ReadYourWritesTimeout)
		if err != nil {
			return ports.Result{}, err
		}
		if waited > 0 {
			c.metrics.cacheWaits.Inc()
			log.Debug("waited for the cache to apply the last write", zap.Duration("waited", waited))
		}
		written := &writeSet{}
		ctx = writes.WithObserver(ctx, written.observe)
		defer func() { c.ledger.record(req, written.snapshot()) }()
	}
	return c.reconciler.Reconcile(ctx, req)
}

var errReconcileTimeout = errors.New("reconcile timeout")

// overrunGrace is how long past its deadline a reconcile may take to
// notice: a tenth of the timeout, at most a second.
func overrunGrace(timeout time.Duration) time.Duration { return min(timeout/10, time.Second) }

// panicError is a recovered panic and the stack that panicked.
type panicError struct {
	value any
	stack []byte
}

// Error does not unwrap a panic value: a panic is always retried, even one
// carrying a terminal error.
func (p *panicError) Error() string { return fmt.Sprintf("panic: %v [recovered]", p.value) }

// setInflight records when the reconcile of req began; zero when it ended.
func (c *Controller) setInflight(req ports.Request, start time.Time) {
	c.inflightMu.Lock()
	defer c.inflightMu.Unlock()
	if start.IsZero() {
		delete(c.inflight, req)
	} else {
		c.inflight[req] = start
	}
}

// inflightKeys lists the requests being reconciled, sorted.
func (c *Controller) inflightKeys() []string {
	c.inflightMu.Lock()
	defer c.inflightMu.Unlock()
	keys := make([]string, 0, len(c.inflight))
	for req := range c.inflight {
		keys = append(keys, req.String())
	}
	slices.Sort(keys)
	return keys
}

// eventHandler filters, maps and enqueues a source's events; the queue
// deduplicates a burst of them.
type eventHandler struct {
	mapFn     MapFunc
	predicate predicate.Predicate
	queue     workqueue.TypedInterface[ports.Request]
}

var _ toolscache.ResourceEventHandler = (*eventHandler)(nil)

func (e *eventHandler) OnAdd(obj any, _ bool) {
	if o, ok := obj.(metav1.Object); ok && e.predicate.Create(o) {
		e.enqueue(requestsOf(e.mapFn, o))
	}
}

func (e *eventHandler) OnUpdate(oldObj, newObj any) {
	o, okOld := oldObj.(metav1.Object)
	n, okNew := newObj.(metav1.Object)
	if okOld && okNew && e.predicate.Update(o, n) {
		e.enqueue(requestsOf(e.mapFn, o, n))
	}
}

// OnDelete unwraps the tombstone of an object whose deletion the watch
// missed: its last known state.
func (e *eventHandler) OnDelete(obj any) {
	if tombstone, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	if o, ok := obj.(metav1.Object); ok && e.predicate.Delete(o) {
		e.enqueue(requestsOf(e.mapFn, o))
	}
}

func (e *eventHandler) enqueue(reqs []ports.Request) {
	for _, r := range reqs {
		e.queue.Add(r)
	}
}

// StuckCheck returns the controller's liveness check: it fails while a
// reconcile has run longer than Options.StuckThreshold, which only a
// restart cures.
func (c *Controller) StuckCheck() StuckCheck { return StuckCheck{c: c} }

// StuckCheck is a controller's liveness check.
type StuckCheck struct{ c *Controller }

// Name is "controller-" and the controller's name.
func (s StuckCheck) Name() string { return "controller-" + s.c.name }

// Check fails while a reconcile has run longer than the threshold.
func (s StuckCheck) Check(context.Context) error {
	c := s.c
	now := time.Now()
	c.inflightMu.Lock()
	defer c.inflightMu.Unlock()
	var (
		oldest  ports.Request
		longest time.Duration
	)
	for req, start := range c.inflight {
		if d := now.Sub(start); d > longest {
			oldest, longest = req, d
		}
	}
	if longest > c.opts.StuckThreshold {
		return fmt.Errorf("controller %q: reconcile of %s running for %s, over the %s threshold",
			c.name, oldest, longest.Round(time.Millisecond), c.opts.StuckThreshold)
	}
	return nil
}

type reconcileKey struct{}

type reconcileInfo struct {
	id  string
	log *zap.Logger
}

func withReconcile(ctx context.Context, id string, log *zap.Logger) context.Context {
	return context.WithValue(ctx, reconcileKey{}, reconcileInfo{id: id, log: log})
}

// LoggerFrom returns the logger of the reconcile ctx belongs to (fields
// controller, namespace, name, reconcileID); a no-op one outside.
func LoggerFrom(ctx context.Context) *zap.Logger {
	if info, ok := ctx.Value(reconcileKey{}).(reconcileInfo); ok {
		return info.log
	}
	return zap.NewNop()
}

// ReconcileIDFrom returns the UUID of the reconcile ctx belongs to, or "".
func ReconcileIDFrom(ctx context.Context) string {
	info, _ := ctx.Value(reconcileKey{}).(reconcileInfo)
	return info.id
}
