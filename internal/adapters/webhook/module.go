package webhook

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/fx"
	"go.uber.org/zap"
	"k8s.io/client-go/kubernetes"

	"github.com/hexagonal-operator/operator/internal/lifecycle"
	"github.com/hexagonal-operator/operator/internal/ports"
)

// Value groups the module reads, as fx result tags for the values that join
// them. The server knows no workload: the composition root registers every
// hook, conversion and extra caBundle target in these groups.
const (
	// GroupHooks takes []Hook (flattened): the registration table.
	GroupHooks = `group:"webhooks,flatten"`
	// GroupConversions takes Conversion values: CRD conversion endpoints.
	GroupConversions = `group:"webhook-conversions"`
	// GroupCATargets takes CABundleTarget values: in self mode, more
	// objects that must trust the operator's CA (CRDConversionTarget).
	GroupCATargets = `group:"webhook-ca-targets"`
)

// Module serves the admission webhooks.
//
// It consumes Options, *zap.Logger, prometheus.Registerer, the groups
// above and, in self mode only, a kubernetes.Interface. It provides:
//   - ports.CertSource: files (external mode) or self-issued certificates,
//     run in the phase lifecycle.Certificates (before the server starts,
//     after it stops), with the expiry of their certificates in
//     operator_certificate_expiry_timestamp_seconds;
//   - *Server, run in the phase lifecycle.Webhooks;
//   - the server's readiness ports.HealthCheck into the group "readyz".
var Module = fx.Module("webhook",
	fx.Provide(
		newCertSource,
		newServer,
		fx.Annotate((*Server).ReadinessCheck, fx.ResultTags(lifecycle.GroupReadyz)),
	),
	lifecycle.Register[*Server]("webhook", lifecycle.Webhooks),
)

type certSourceParams struct {
	fx.In
	Options    Options
	Logger     *zap.Logger
	Registerer prometheus.Registerer
	Client     kubernetes.Interface `optional:"true"`
	Targets    []CABundleTarget     `group:"webhook-ca-targets"`
}

type certSourceResult struct {
	fx.Out
	Certs ports.CertSource
	Part  lifecycle.Part `group:"lifecycle"`
}

// runningCertSource is a certificate source with a lifecycle: both modes'.
type runningCertSource interface {
	ports.CertSource
	lifecycle.Runner
}

// newCertSource builds the source of the mode, registers the expiry metric
// of its certificates, and runs it in the phase lifecycle.Certificates,
// before the server that presents them.
func newCertSource(p certSourceParams) (certSourceResult, error) {
	s, err := newModeCertSource(p)
	if err != nil {
		return certSourceResult{}, err
	}
	if err := registerCertExpiry(p.Registerer, s); err != nil {
		return certSourceResult{}, err
	}
	return certSourceResult{
		Certs: s,
		Part:  lifecycle.Part{Name: "webhook-certificates", Phase: lifecycle.Certificates, Start: s.Start, Stop: s.Stop},
	}, nil
}

func newModeCertSource(p certSourceParams) (runningCertSource, error) {
	opts := p.Options.withDefaults()
	if err := opts.validate(); err != nil {
		return nil, fmt.Errorf("webhook options: %w", err)
	}
	log := p.Logger.Named("webhook")
	switch opts.CertMode {
	case CertModeSelf:
		if p.Client == nil {
			return nil, fmt.Errorf("webhook certificate mode %q needs a Kubernetes client", CertModeSelf)
		}
		return NewSelfCertSource(opts.Self, p.Client, log, p.Targets...)
	default:
		s, err := NewFileCertSource(CertFiles{Dir: opts.CertDir, CertName: opts.CertName, KeyName: opts.KeyName}, opts.CertPollInterval, log)
		if err != nil {
			return nil, err
		}
		return s, s.RegisterMetrics(p.Registerer)
	}
}

type serverParams struct {
	fx.In
	Options     Options
	Certs       ports.CertSource
	Hooks       []Hook       `group:"webhooks"`
	Conversions []Conversion `group:"webhook-conversions"`
	Registerer  prometheus.Registerer
	Logger      *zap.Logger
}

func newServer(p serverParams) (*Server, error) {
	return New(p.Options, p.Certs, p.Hooks, p.Registerer, p.Logger.Named("webhook"), p.Conversions...)
}
