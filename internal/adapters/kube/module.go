package kube

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/fx"
	"go.uber.org/zap"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
)

// Module provides the clients (*Clients, kubernetes.Interface,
// metadata.Interface, dynamic.Interface) from a *rest.Config and, if given,
// [Options], and runs the [APIServerProbe], whose check goes into no probe
// group on purpose (see [APIServerCheck]). The composition root builds a
// [Writer] from *Clients for each kind it writes, and a [Reader] for each
// read that must not come from a cache.
var Module = fx.Module("kube",
	fx.Provide(
		fx.Annotate(NewClients, fx.ParamTags("", `optional:"true"`)),
		func(c *Clients) (kubernetes.Interface, metadata.Interface, dynamic.Interface) {
			return c.Kubernetes, c.Metadata, c.Dynamic
		},
		newAPIServerProbe,
	),
	fx.Invoke(func(*APIServerProbe) {}),
)

type probeParams struct {
	fx.In
	Lifecycle  fx.Lifecycle
	Client     kubernetes.Interface
	Options    ProbeOptions          `optional:"true"`
	Registerer prometheus.Registerer `optional:"true"`
	Logger     *zap.Logger           `optional:"true"`
}

func newAPIServerProbe(p probeParams) (*APIServerProbe, error) {
	check, err := NewAPIServerCheck(p.Client)
	if err != nil {
		return nil, fmt.Errorf("kube module: %w", err)
	}
	log := p.Logger
	if log != nil {
		log = log.Named("apiserver")
	}
	probe, err := NewAPIServerProbe(check, p.Options.Interval, p.Registerer, log)
	if err != nil {
		return nil, fmt.Errorf("kube module: %w", err)
	}
	p.Lifecycle.Append(fx.StartStopHook(probe.Start, probe.Stop))
	return probe, nil
}
