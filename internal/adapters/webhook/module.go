package webhook

import (
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/fx"
	"go.uber.org/zap"
)

// Value groups the module reads, as fx result tags for the values that join
// them. The server knows no workload: the composition root registers every
// hook and conversion in these groups.
const (
	// GroupHooks takes []Hook (flattened): the registration table.
	GroupHooks = `group:"webhooks,flatten"`
	// GroupConversions takes Conversion values: CRD conversion endpoints.
	GroupConversions = `group:"webhook-conversions"`
)

// Module serves the admission webhooks and conversions of the groups above
// with a CertSource, started when built, stopped before its dependencies.
var Module = fx.Module("webhook",
	fx.Provide(newServer),
	fx.Invoke(func(*Server) {}),
)

type serverParams struct {
	fx.In
	Lifecycle   fx.Lifecycle
	Options     Options
	Certs       CertSource
	Hooks       []Hook       `group:"webhooks"`
	Conversions []Conversion `group:"webhook-conversions"`
	Registerer  prometheus.Registerer
	Logger      *zap.Logger
}

func newServer(p serverParams) (*Server, error) {
	s, err := New(p.Options, p.Certs, p.Hooks, p.Registerer, p.Logger.Named("webhook"), p.Conversions...)
	if err != nil {
		return nil, err
	}
	p.Lifecycle.Append(fx.StartStopHook(s.Start, s.Stop))
	return s, nil
}
