package kube

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/fx"
	"go.uber.org/zap"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"

	"github.com/hexagonal-operator/operator/internal/lifecycle"
)

// Module provides the clients. It consumes a *rest.Config and an [Options]
// from the composition root, and provides *Clients, kubernetes.Interface,
// metadata.Interface, dynamic.Interface and the [APIServerProbe]. The
// composition root builds a [Writer] from *Clients for each kind it writes.
//
// The probe runs in the phase lifecycle.Telemetry, with the optional
// [ProbeOptions], and reports to the optional prometheus.Registerer and
// *zap.Logger. Its check goes into no probe group on purpose: see
// [APIServerCheck].
var Module = fx.Module("kube",
	fx.Provide(
		NewClients,
		func(c *Clients) (kubernetes.Interface, metadata.Interface, dynamic.Interface) {
			return c.Kubernetes, c.Metadata, c.Dynamic
		},
		newAPIServerProbe,
	),
	lifecycle.Register[*APIServerProbe]("apiserver-probe", lifecycle.Telemetry),
)

type probeParams struct {
	fx.In
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
	return probe, nil
}
