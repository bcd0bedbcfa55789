package controller

import (
	"errors"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	"k8s.io/client-go/util/workqueue"

	"github.com/hexagonal-operator/operator/internal/ports"
)

// Defaults, as controller-runtime's where it has one.
const (
	// DefaultReconcileTimeout bounds one Reconcile call.
	DefaultReconcileTimeout = 60 * time.Second
	// DefaultReadYourWritesTimeout bounds how long a reconcile waits for
	// the cache to apply the previous reconcile's writes. A watch delivers
	// in milliseconds; seconds mean the watch is down, and the request is
	// better retried with back-off than reconciled on stale state.
	DefaultReadYourWritesTimeout = 10 * time.Second
	// stuckFactor × ReconcileTimeout is the default stuck threshold: a
	// reconcile that outlives its own deadline that long ignores its context
	// and will not come back by itself.
	stuckFactor = 3
)

// Options tune a controller. The zero value gives the defaults.
type Options struct {
	// ReconcileTimeout bounds each Reconcile call through its context.
	// Default [DefaultReconcileTimeout].
	ReconcileTimeout time.Duration
	// StuckThreshold is how long one reconcile may run before the stuck
	// check ([Controller.StuckCheck]) fails. Default 3 × ReconcileTimeout.
	StuckThreshold time.Duration
	// NewRateLimiter makes the back-off for failed requests. It is a
	// factory because a rate limiter remembers failures per request, and
	// two controllers must not share that memory (their requests can have
	// the same namespace and name). Default
	// workqueue.DefaultTypedControllerRateLimiter, client-go's controller
	// default.
	NewRateLimiter func() workqueue.TypedRateLimiter[ports.Request]
	// ReadYourWritesTimeout bounds the wait, before a reconcile, for the
	// caches to apply the writes the previous reconcile of the same request
	// made (see the package documentation). On timeout the reconcile fails
	// and is retried with back-off. Default [DefaultReadYourWritesTimeout].
	ReadYourWritesTimeout time.Duration
	// DisableReadYourWrites reconciles without that wait, as
	// controller-runtime does.
	DisableReadYourWrites bool
}

func (o Options) withDefaults() Options {
	if o.ReconcileTimeout == 0 {
		o.ReconcileTimeout = DefaultReconcileTimeout
	}
	if o.StuckThreshold == 0 {
		o.StuckThreshold = stuckFactor * o.ReconcileTimeout
	}
	if o.ReadYourWritesTimeout == 0 {
		o.ReadYourWritesTimeout = DefaultReadYourWritesTimeout
	}
	if o.NewRateLimiter == nil {
		o.NewRateLimiter = workqueue.DefaultTypedControllerRateLimiter[ports.Request]
	}
	return o
}

func (o Options) validate() error {
	var errs []error
	if o.ReconcileTimeout < 0 {
		errs = append(errs, fmt.Errorf("reconcile timeout %s is negative", o.ReconcileTimeout))
	}
	if o.ReadYourWritesTimeout < 0 {
		errs = append(errs, fmt.Errorf("read-your-writes timeout %s is negative", o.ReadYourWritesTimeout))
	}
	if o.StuckThreshold < 0 {
		errs = append(errs, fmt.Errorf("stuck threshold %s is negative", o.StuckThreshold))
	}
	return errors.Join(errs...)
}

// Deps is what every controller of a process shares: where it logs and
// exposes metrics, and the leadership its workers wait for.
type Deps struct {
	Logger     *zap.Logger
	Registerer prometheus.Registerer
	// LeaderElector gates the workers once the watched sources have
	// synced (so a reconcile never reads a half-filled cache): only the leader
	// reconciles. Without leader election, pass one that is elected at once.
	LeaderElector ports.LeaderElector
	Options       Options
}

func (d Deps) validate() error {
	var errs []error
	if d.Logger == nil {
		errs = append(errs, errors.New("logger is nil"))
	}
	if d.Registerer == nil {
		errs = append(errs, errors.New("metrics registerer is nil"))
	}
	if d.LeaderElector == nil {
		errs = append(errs, errors.New("leader elector is nil"))
	}
	return errors.Join(errs...)
}
