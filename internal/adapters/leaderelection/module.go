package leaderelection

import (
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/fx"
	"go.uber.org/zap"
	"k8s.io/client-go/kubernetes"

	"github.com/hexagonal-operator/operator/internal/lifecycle"
	"github.com/hexagonal-operator/operator/internal/ports"
)

// Module provides ports.LeaderElector (and *Elector), and the elector's
// lease check in the value group "healthz".
//
// It consumes an [Options], prometheus.Registerer, *zap.Logger,
// fx.Shutdowner and, when enabled, kubernetes.Interface. Without
// Options.OnLost, losing the Lease shuts the application down with exit
// code 1. Campaigning runs in the phase lifecycle.Election, after the
// caches (so a new leader starts with warm caches) and before the
// controllers (so the Lease is released only after they stopped); its
// stop releases the Lease.
var Module = fx.Module("leaderelection",
	fx.Provide(
		fx.Annotate(newElector,
			fx.As(fx.Self()),
			fx.As(new(ports.LeaderElector)),
		),
		fx.Annotate(func(e *Elector) ports.HealthCheck { return e }, fx.ResultTags(lifecycle.GroupHealthz)),
	),
	lifecycle.Register[*Elector]("leader-election", lifecycle.Election),
)

type electorParams struct {
	fx.In
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
	return New(p.Client, p.Registerer, opts, p.Logger.Named("leaderelection"))
}
