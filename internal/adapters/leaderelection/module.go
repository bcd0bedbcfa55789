package leaderelection

import (
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/fx"
	"go.uber.org/zap"
	"k8s.io/client-go/kubernetes"
)

// Module provides the *Elector, which the composition root hands the
// controllers as their LeaderElector. Without
// Options.OnLost, losing the Lease shuts the application down with exit
// code 1; its stop releases the Lease.
var Module = fx.Module("leaderelection",
	fx.Provide(
		newElector,
	),
	fx.Invoke(func(*Elector) {}),
)

type electorParams struct {
	fx.In
	Lifecycle  fx.Lifecycle
	Options    Options
	Client     kubernetes.Interface `optional:"true"`
	Registerer prometheus.Registerer
	Logger     *zap.Logger
	Shutdowner fx.Shutdowner
}

func newElector(p electorParams) (*Elector, error) {
	opts := p.Options
	if opts.OnLost == nil {
		opts.OnLost = func() { _ = p.Shutdowner.Shutdown(fx.ExitCode(1)) }
	}
	e, err := New(p.Client, p.Registerer, opts, p.Logger.Named("leaderelection"))
	if err != nil {
		return nil, err
	}
	p.Lifecycle.Append(fx.StartStopHook(e.Start, e.Stop))
	return e, nil
}
