package cache

import (
	"context"
	"math"
	"time"

	"go.uber.org/zap"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"
)

// patience makes an informer's lists and watches wait out an API server
// that refuses connections, retrying at most every max (plus jitter),
// instead of handing the error to the reflector. The reflector's back-off
// (growing to its cap, reset only after quiet minutes, not configurable
// through a shared informer) left informers asleep long after a short API
// server restart was over (docs/reliability.md has the figures). A refused
// connection costs the server nothing; every other error still goes to the
// reflector.
type patience struct {
	logger     *zap.Logger
	kind       string
	first, max time.Duration // bounds of the wait between two attempts
}

// wrap returns a ListWatch whose calls go through p.
func (p patience) wrap(lw *toolscache.ListWatch) *toolscache.ListWatch {
	list, watchFn := lw.ListWithContextFunc, lw.WatchFuncWithContext
	return &toolscache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			return awaitServer(ctx, p, func() (runtime.Object, error) { return list(ctx, opts) })
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			return awaitServer(ctx, p, func() (watch.Interface, error) { return watchFn(ctx, opts) })
		},
	}
}

// awaitServer calls call until it returns anything but a refused
// connection, or ctx ends, logging when a wait starts and ends.
func awaitServer[T any](ctx context.Context, p patience, call func() (T, error)) (T, error) {
	v, err := call()
	if err == nil || !utilnet.IsConnectionRefused(err) {
		return v, err
	}
	start := time.Now()
	p.logger.Warn("api server refuses connections, waiting for it", zap.String("kind", p.kind), zap.Error(err))
	b := wait.Backoff{Duration: p.first, Factor: 2, Jitter: 0.5, Steps: math.MaxInt32, Cap: p.max}
	for {
		t := time.NewTimer(b.Step())
		select {
		case <-ctx.Done():
			t.Stop()
			return v, err
		case <-t.C:
		}
		v, err = call()
		if err == nil || !utilnet.IsConnectionRefused(err) {
			p.logger.Info("api server accepts connections again", zap.String("kind", p.kind), zap.Duration("waited", time.Since(start)))
			return v, err
		}
	}
}
