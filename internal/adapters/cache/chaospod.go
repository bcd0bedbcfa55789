package cache

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"go.uber.org/zap"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	toolscache "k8s.io/client-go/tools/cache"

	chaosv1 "github.com/hexagonal-operator/operator/api/chaos/v1"
	"github.com/hexagonal-operator/operator/internal/ports"
)

// KindChaosPod names the ChaosPod informer in logs.
const KindChaosPod = chaosv1.Kind

// ChaosPodCache is a shared informer of v1 ChaosPods. It watches through
// the dynamic client and converts each object to the typed
// *chaosv1.ChaosPod in the informer's transform, so the store, the readers
// and the event handlers only ever see typed objects.
//
// It is its own type, with its own lifecycle, rather than a kind of
// [Cache]: a cluster without the CRD must not hold up the built-in kinds,
// and the composition root adds it only when the chaospod controller runs.
type ChaosPodCache struct {
	logger   *zap.Logger
	informer toolscache.SharedIndexInformer

	mu      sync.Mutex
	state   state
	started chan struct{}
	cancel  context.CancelFunc
	done    chan struct{}
}

var (
	_ ports.ChaosPodReader = (*ChaosPodCache)(nil)
	_ ports.CacheSync      = (*ChaosPodCache)(nil)
	_ ports.HealthCheck    = (*ChaosPodCache)(nil)
	_ ports.Source         = (*ChaosPodCache)(nil)
	_ ports.CacheFreshness = (*ChaosPodCache)(nil)
)

// NewChaosPodCache returns a ChaosPod cache reading through client, in
// opts.Namespace only when set. It does no I/O and starts nothing.
func NewChaosPodCache(client dynamic.Interface, logger *zap.Logger, opts Options) (*ChaosPodCache, error) {
	if client == nil {
		return nil, errors.New("chaospod cache: a dynamic client is required")
	}
	if logger == nil {
		logger = zap.NewNop()
	}
	lw := listWatch(client.Resource(chaosv1.GroupVersionResource).Namespace(opts.Namespace))
	inf := newInformer(logger, KindChaosPod, lw, client, &unstructured.Unstructured{}, nil)
	strip := !opts.KeepManagedFields
	if err := inf.SetTransform(func(obj any) (any, error) { return toChaosPod(obj, strip) }); err != nil {
		return nil, fmt.Errorf("chaospod cache: set transform: %w", err)
	}
	c := &ChaosPodCache{logger: logger, informer: inf, started: make(chan struct{}), done: make(chan struct{})}
	if err := inf.SetWatchErrorHandlerWithContext(func(ctx context.Context, _ *toolscache.Reflector, err error) {
		if ctx.Err() != nil || apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
			return
		}
		c.logger.Error("watch failed", zap.String("kind", KindChaosPod), zap.Error(err))
	}); err != nil {
		return nil, fmt.Errorf("chaospod cache: set watch error handler: %w", err)
	}
	return c, nil
}

// toChaosPod is the informer's transform: unstructured in, typed out.
// Tombstones pass through; their object was converted when it was added.
func toChaosPod(obj any, strip bool) (any, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil
	}
	var cp chaosv1.ChaosPod
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &cp); err != nil {
		return nil, fmt.Errorf("convert %s %s/%s: %w", KindChaosPod, u.GetNamespace(), u.GetName(), err)
	}
	if strip {
		cp.ManagedFields = nil
	}
	return &cp, nil
}

// Start runs the informer until Stop. It returns at once.
func (c *ChaosPodCache) Start(context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch c.state {
	case stateRunning:
		return nil
	case stateStopped:
		return ErrStopped
	}
	ctx, cancel := context.WithCancel(context.Background())
	c.cancel = cancel
	c.state = stateRunning
	close(c.started)
	go func() {
		defer close(c.done)
		c.informer.RunWithContext(ctx)
	}()
	return nil
}

// Stop stops the informer and waits for it, at most until ctx is done.
func (c *ChaosPodCache) Stop(ctx context.Context) error {
	c.mu.Lock()
	prev := c.state
	c.state = stateStopped
	switch prev {
	case stateStopped:
		c.mu.Unlock()
		return nil
	case stateNew:
		close(c.started)
		c.mu.Unlock()
		return nil
	}
	c.cancel()
	c.mu.Unlock()
	select {
	case <-c.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("stop chaospod informer: %w", context.Cause(ctx))
	}
}

// Kind implements ports.Source.
func (c *ChaosPodCache) Kind() string { return KindChaosPod }

// HasApplied implements ports.CacheFreshness.
func (c *ChaosPodCache) HasApplied(resourceVersion string) bool {
	return storeHasApplied(c.informer.GetIndexer(), resourceVersion)
}

// AddEventHandler implements ports.Source; handlers get *chaosv1.ChaosPod.
func (c *ChaosPodCache) AddEventHandler(h ports.EventHandler) error {
	if h == nil {
		return errors.New("add event handler: nil handler")
	}
	if _, err := c.informer.AddEventHandler(eventHandler{h: h}); err != nil {
		return fmt.Errorf("add %s event handler: %w", KindChaosPod, err)
	}
	return nil
}

// HasSynced implements ports.CacheSync.
func (c *ChaosPodCache) HasSynced() bool { return c.Check(context.Background()) == nil }

// WaitForSync implements ports.CacheSync.
func (c *ChaosPodCache) WaitForSync(ctx context.Context) error {
	select {
	case <-c.started:
	case <-ctx.Done():
		return ctx.Err()
	}
	c.mu.Lock()
	st := c.state
	c.mu.Unlock()
	if st == stateStopped {
		return ErrStopped
	}
	if !toolscache.WaitFor(ctx, "", c.informer.HasSyncedChecker()) {
		return ctx.Err()
	}
	return nil
}

// Name implements ports.HealthCheck.
func (c *ChaosPodCache) Name() string { return "chaospod-informer" }

// Check implements ports.HealthCheck.
func (c *ChaosPodCache) Check(context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch c.state {
	case stateNew:
		return ErrNotStarted
	case stateStopped:
		return ErrStopped
	}
	if !c.informer.HasSynced() {
		return fmt.Errorf("informers not synced: %s", KindChaosPod)
	}
	return nil
}

// GetChaosPod implements ports.ChaosPodReader, waiting for the first sync
// (at most until ctx is done). The object is shared with the cache.
func (c *ChaosPodCache) GetChaosPod(ctx context.Context, key types.NamespacedName) (*chaosv1.ChaosPod, error) {
	if err := c.WaitForSync(ctx); err != nil {
		return nil, fmt.Errorf("read chaospod %s from cache: %w", key, err)
	}
	obj, ok, err := c.informer.GetIndexer().GetByKey(key.String())
	if err != nil {
		return nil, fmt.Errorf("read chaospod %s from cache: %w", key, err)
	}
	if !ok {
		return nil, fmt.Errorf("chaospod %s: %w", key, ports.ErrNotFound)
	}
	cp, ok := obj.(*chaosv1.ChaosPod)
	if !ok {
		return nil, fmt.Errorf("read chaospod %s from cache: unexpected %T", key, obj)
	}
	return cp, nil
}
