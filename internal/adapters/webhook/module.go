package webhook

import (
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/fx"
	"go.uber.org/zap"

	"github.com/hexagonal-operator/operator/internal/lifecycle"
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

// Module serves the admission webhooks and conversions.
//
// It consumes Options, a CertSource, *zap.Logger, prometheus.Registerer
// and the groups above. It provides
// *Server, run in the phase lifecycle.Webhooks, and its readiness
// ports.HealthCheck in the group "readyz".
var Module = fx.Module("webhook",
	fx.Provide(
		newServer,
		fx.Annotate((*Server).ReadinessCheck, fx.ResultTags(lifecycle.GroupReadyz)),
	),
	lifecycle.Register[*Server]("webhook", lifecycle.Webhooks),
)

type serverParams struct {
	fx.In
	Options     Options
	Certs       CertSource
	Hooks       []Hook       `group:"webhooks"`
	Conversions []Conversion `group:"webhook-conversions"`
	Registerer  prometheus.Registerer
	Logger      *zap.Logger
}

func newServer(p serverParams) (*Server, error) {
	return New(p.Options, p.Certs, p.Hooks, p.Registerer, p.Logger.Named("webhook"), p.Conversions...)
}
