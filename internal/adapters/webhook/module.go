package webhook

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/fx"
	"go.uber.org/zap"

	"github.com/hexagonal-operator/operator/internal/kubeclient"
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
// above and, in self mode only, a kubeclient.Interface. It provides:
//   - ports.CertSource: files (external mode) or self-issued certificates,
//     started before the server and stopped after it, with the expiry of
//     their certificates in operator_certificate_expiry_timestamp_seconds;
//   - *Server, started and stopped with the application;
//   - the server's readiness ports.HealthCheck into the group "readyz".
var Module = fx.Module("webhook",
	fx.Provide(
		newCertSource,
		newServer,
		fx.Annotate((*Server).ReadinessCheck, fx.ResultTags(`group:"readyz"`)),
	),
	fx.Invoke(func(*Server) {}),
)

type certSourceParams struct {
	fx.In
	Lifecycle  fx.Lifecycle
	Options    Options
	Logger     *zap.Logger
	Registerer prometheus.Registerer
	Client     kubeclient.Interface `optional:"true"`
	Targets    []CABundleTarget     `group:"webhook-ca-targets"`
}

// newCertSource builds the source of the mode and registers the expiry
// metric of its certificates.
func newCertSource(p certSourceParams) (ports.CertSource, error) {
	s, err := newModeCertSource(p)
	if err != nil {
		return nil, err
	}
	if err := registerCertExpiry(p.Registerer, s); err != nil {
		return nil, err
	}
	return s, nil
}

func newModeCertSource(p certSourceParams) (ports.CertSource, error) {
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
		s, err := NewSelfCertSource(opts.Self, p.Client, log, p.Targets...)
		if err != nil {
			return nil, err
		}
		p.Lifecycle.Append(fx.StartStopHook(s.Start, s.Stop))
		return s, nil
	default:
		s, err := NewFileCertSource(CertFiles{Dir: opts.CertDir, CertName: opts.CertName, KeyName: opts.KeyName}, opts.CertPollInterval, log)
		if err != nil {
			return nil, err
		}
		p.Lifecycle.Append(fx.StartStopHook(s.Start, s.Stop))
		return s, nil
	}
}

type serverParams struct {
	fx.In
	Lifecycle   fx.Lifecycle
	Options     Options
	Certs       ports.CertSource
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
