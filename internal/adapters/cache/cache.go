package cache

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	toolscache "k8s.io/client-go/tools/cache"
)

// HealthCheckName names the cache's readiness check.
const HealthCheckName = "informers"

// Errors of reads made outside the cache's running life.
var (
	ErrNotStarted = errors.New("cache not started")
	ErrStopped    = errors.New("cache stopped")
)

// Options configure a [Cache]. The zero value caches every namespace and
// strips managedFields, which the operator never reads.
type Options struct {
	// Namespace restricts every informer to one namespace; empty means all.
	Namespace string
	// KeepManagedFields keeps metadata.managedFields in cached objects.
	KeepManagedFields bool
}

type state int

const (
	stateNew state = iota
	stateRunning
	stateStopped
)

// Cache holds the shared informers of the kinds the operator reads and
// watches.
type Cache struct {
	logger    *zap.Logger
	client    kubernetes.Interface
	meta      metadata.Interface
	namespace string
	strip     bool
	interner  *interner

	mu        sync.Mutex
	state     state
	started   chan struct{} // closed by Start
	cancel    context.CancelFunc
	runCtx    context.Context
	informers map[informerKey]toolscache.SharedIndexInformer
	claims    map[informerKey]string // how each informer's resource is cached
	running   sync.WaitGroup         // the informers' goroutines
}

// New returns a cache reading through client and meta, with
// operator_cache_objects on reg unless it is nil. It does no I/O.
func New(client kubernetes.Interface, meta metadata.Interface, reg prometheus.Registerer, logger *zap.Logger, opts Options) (*Cache, error) {
	if client == nil || meta == nil {
		return nil, errors.New("cache: a kubernetes client and a metadata client are required")
	}
	if logger == nil {
		logger = zap.NewNop()
	}
	c := &Cache{
		logger:    logger,
		client:    client,
		meta:      meta,
		namespace: opts.Namespace,
		strip:     !opts.KeepManagedFields,
		interner:  newInterner(),
		started:   make(chan struct{}),
		informers: map[informerKey]toolscache.SharedIndexInformer{},
		claims:    map[informerKey]string{},
	}
	if reg != nil {
		if err := reg.Register(objectsCollector{c: c}); err != nil {
			return nil, fmt.Errorf("cache: register metrics: %w", err)
		}
	}
	return c, nil
}

// Start runs the informers asked for so far, and any asked for later, until
// Stop. It returns at once; a stopped cache cannot be started again.
func (c *Cache) Start(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch c.state {
	case stateRunning:
		return nil
	case stateStopped:
		return ErrStopped
	}
	// The informers outlive the start context, which fx cancels.
	c.runCtx, c.cancel = context.WithCancel(context.WithoutCancel(ctx))
	c.state = stateRunning
	for _, inf := range c.informers {
		c.running.Go(func() { inf.RunWithContext(c.runCtx) })
	}
	close(c.started)
	return nil
}

// Stop stops the informers and waits for them, at most until ctx is done.
func (c *Cache) Stop(ctx context.Context) error {
	c.mu.Lock()
	if c.state == stateStopped {
		c.mu.Unlock()
		return nil
	}
	if c.state == stateNew {
		close(c.started) // wakes WaitForSync, which then sees the stop
	} else {
		c.cancel()
	}
	c.state = stateStopped
	c.mu.Unlock()

	done := make(chan struct{})
	go func() {
		defer close(done)
		c.running.Wait()
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("stop informers: %w", context.Cause(ctx))
	}
}

// HasSynced reports whether the cache runs and every informer has listed.
func (c *Cache) HasSynced() bool {
	return c.Check(context.Background()) == nil
}

// WaitForSync blocks until HasSynced, ctx is done or the cache stops
// (ErrStopped). Before Start it waits for Start.
func (c *Cache) WaitForSync(ctx context.Context) error {
	select {
	case <-c.started:
	case <-ctx.Done():
		return ctx.Err()
	}
	for {
		c.mu.Lock()
		if c.state == stateStopped {
			c.mu.Unlock()
			return ErrStopped
		}
		checkers := make([]toolscache.DoneChecker, 0, len(c.informers))
		for _, inf := range c.informers {
			checkers = append(checkers, inf.HasSyncedChecker())
		}
		c.mu.Unlock()
		if !c.waitFor(ctx, checkers...) && ctx.Err() != nil {
			return ctx.Err()
		}
		// An informer may have been asked for while we waited.
		if c.HasSynced() {
			return nil
		}
	}
}

// Name names the cache as a readiness check.
func (c *Cache) Name() string { return HealthCheckName }

// Check is the readiness check: it fails naming the kinds still listing.
func (c *Cache) Check(context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch c.state {
	case stateNew:
		return ErrNotStarted
	case stateStopped:
		return ErrStopped
	}
	var pending []string
	for key, inf := range c.informers {
		if !inf.HasSynced() {
			pending = append(pending, key.String())
		}
	}
	if len(pending) > 0 {
		slices.Sort(pending)
		return fmt.Errorf("informers not synced: %s", strings.Join(pending, ", "))
	}
	return nil
}

// informer returns the informer of s, building it on first use and running
// it at once when the cache runs already.
func (c *Cache) informer(s *source) (toolscache.SharedIndexInformer, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state == stateStopped {
		return nil, ErrStopped
	}
	if inf, ok := c.informers[s.key]; ok {
		return inf, nil
	}
	inf := s.build()
	transform := c.transform
	if s.decode != nil {
		transform = func(obj any) (any, error) {
			decoded, err := s.decode(obj)
			if err != nil {
				return nil, err
			}
			return c.transform(decoded)
		}
	}
	if err := inf.SetTransform(transform); err != nil {
		return nil, fmt.Errorf("set %s transform: %w", s.key, err)
	}
	if err := inf.SetWatchErrorHandlerWithContext(c.watchErrorHandler(s.key.String())); err != nil {
		return nil, fmt.Errorf("set %s watch error handler: %w", s.key, err)
	}
	c.informers[s.key] = inf
	if c.state == stateRunning {
		c.running.Go(func() { inf.RunWithContext(c.runCtx) })
	}
	return inf, nil
}

// claim reserves the informer key for one way of caching it (how), which
// two resources of one kind name and selector would otherwise share by
// mistake.
func (c *Cache) claim(key informerKey, how string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if prev, ok := c.claims[key]; ok && prev != how {
		return fmt.Errorf("cache resource %s: kind %s is already cached as %s", how, key, prev)
	}
	c.claims[key] = how
	return nil
}

// newInformer is a shared informer of lw without namespace index (reads are
// by key), waiting out refused connections, so that it sees an API server
// back from a restart within about three seconds; client is what lw lists
// through.
func newInformer(logger *zap.Logger, kind string, lw *toolscache.ListWatch, client any, example runtime.Object) toolscache.SharedIndexInformer {
	p := patience{logger: logger, kind: kind, first: 200 * time.Millisecond, max: 2 * time.Second}
	return toolscache.NewSharedIndexInformerWithOptions(
		toolscache.ToListWatcherWithWatchListSemantics(p.wrap(lw), client), example,
		toolscache.SharedIndexInformerOptions{})
}

// listWatcher is a metadata or dynamic client of one kind, whose List
// returns the kind's list type L.
type listWatcher[L runtime.Object] interface {
	List(ctx context.Context, opts metav1.ListOptions) (L, error)
	Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
}

// listWatch is the ListWatch of an informer over client.
func listWatch[L runtime.Object](client listWatcher[L]) *toolscache.ListWatch {
	return &toolscache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			list, err := client.List(ctx, opts)
			if err != nil {
				return nil, err // a nil L is not a nil runtime.Object
			}
			return list, nil
		},
		WatchFuncWithContext: client.Watch,
	}
}

// syncedInformer is informer for reads: the informer of a running cache
// once it has synced, waiting for that until ctx is done.
func (c *Cache) syncedInformer(ctx context.Context, s *source) (toolscache.SharedIndexInformer, error) {
	inf, err := c.informer(s)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	st := c.state
	c.mu.Unlock()
	if st == stateNew {
		return nil, ErrNotStarted
	}
	if !inf.HasSynced() && !c.waitFor(ctx, inf.HasSyncedChecker()) {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("wait for %s cache to sync: %w", s.key, ctx.Err())
		}
		return nil, ErrStopped
	}
	return inf, nil
}

// waitFor waits for checkers until ctx is done or the cache (started)
// stops, which an informer stopped before its first list never reports.
func (c *Cache) waitFor(ctx context.Context, checkers ...toolscache.DoneChecker) bool {
	c.mu.Lock()
	runCtx := c.runCtx
	c.mu.Unlock()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(runCtx, cancel)()
	return toolscache.WaitFor(ctx, "", checkers...)
}

// watchErrorHandler logs why a watch broke: expired resource versions and
// closed connections at debug level (the reflector recovers), anything else
// (RBAC, a missing resource) as an error, since it needs a human.
func (c *Cache) watchErrorHandler(kind string) toolscache.WatchErrorHandlerWithContext {
	return func(ctx context.Context, _ *toolscache.Reflector, err error) {
		if ctx.Err() != nil || apierrors.IsResourceExpired(err) || apierrors.IsGone(err) ||
			errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			c.logger.Debug("watch restarted", zap.String("kind", kind), zap.Error(err))
			return
		}
		c.logger.Error("watch failed", zap.String("kind", kind), zap.Error(err))
	}
}

// transform strips managedFields (unless Options.KeepManagedFields) and
// interns metadata, in place (which client-go allows), idempotently.
func (c *Cache) transform(obj any) (any, error) {
	o, ok := obj.(metav1.Object)
	if !ok {
		return obj, nil
	}
	if c.strip && o.GetManagedFields() != nil {
		o.SetManagedFields(nil)
	}
	c.interner.intern(o)
	return obj, nil
}

var objectsDesc = prometheus.NewDesc(
	"operator_cache_objects",
	"Number of objects held in the operator's informer caches.",
	[]string{"kind", "selector"}, nil,
)

// objectsCollector counts the stores at scrape time.
type objectsCollector struct{ c *Cache }

func (o objectsCollector) Describe(ch chan<- *prometheus.Desc) { ch <- objectsDesc }

func (o objectsCollector) Collect(ch chan<- prometheus.Metric) {
	o.c.mu.Lock()
	counts := make(map[informerKey]int, len(o.c.informers))
	for key, inf := range o.c.informers {
		counts[key] = len(inf.GetStore().ListKeys())
	}
	o.c.mu.Unlock()
	for key, n := range counts {
		ch <- prometheus.MustNewConstMetric(objectsDesc, prometheus.GaugeValue, float64(n), key.kind, key.selector)
	}
}
