package controller

import (
	"errors"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/fx"
	"go.uber.org/zap"
)

// Options tune a controller. The zero value gives the defaults.
type Options struct {
	// ReconcileTimeout bounds each Reconcile call through its context.
	ReconcileTimeout time.Duration
	// StuckThreshold is how long one reconcile may run before
	// [Controller.StuckCheck] fails; default 3 × ReconcileTimeout.
	StuckThreshold time.Duration
	// ReadYourWritesTimeout bounds the wait, before a reconcile, for the
	// caches to apply the previous reconcile's writes of the same request;
	// past it the reconcile fails and is retried with back-off.
	ReadYourWritesTimeout time.Duration
	// DisableReadYourWrites reconciles without that wait, as
	// controller-runtime does.
	DisableReadYourWrites bool
}

func (o Options) withDefaults() Options {
	if o.ReconcileTimeout == 0 {
		o.ReconcileTimeout = 60 * time.Second // controller-runtime's
	}
	if o.StuckThreshold == 0 {
		o.StuckThreshold = 3 * o.ReconcileTimeout
	}
	if o.ReadYourWritesTimeout == 0 {
		// A watch delivers in milliseconds; seconds mean it is down, and a
		// retry with back-off beats a reconcile on stale state.
		o.ReadYourWritesTimeout = 10 * time.Second
	}
	return o
}

func (o Options) validate() error {
	var errs []error
	for _, f := range []struct {
		name string
		d    time.Duration
	}{{"reconcile timeout", o.ReconcileTimeout}, {"read-your-writes timeout", o.ReadYourWritesTimeout}, {"stuck threshold", o.StuckThreshold}} {
		if f.d < 0 {
			errs = append(errs, fmt.Errorf("%s %s is negative", f.name, f.d))
		}
	}
	return errors.Join(errs...)
}

// LeaderElector knows whether this replica leads. Controllers run only on
// the leader; webhooks and caches run everywhere.
type LeaderElector interface {
	// Elected returns a channel that is closed once this replica has become
	// the leader. It is never closed on a standby.
	Elected() <-chan struct{}
}

// Deps is what every controller of a process shares, an fx parameter
// object.
type Deps struct {
	fx.In
	Logger     *zap.Logger
	Registerer prometheus.Registerer
	// LeaderElector gates the workers: only the leader reconciles. Without
	// leader election, pass one that is elected at once.
	LeaderElector LeaderElector
	Options       Options `optional:"true"`
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
