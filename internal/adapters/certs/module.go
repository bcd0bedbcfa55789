package certs

import (
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/fx"
	"go.uber.org/zap"
	"k8s.io/client-go/kubernetes"
)

// GroupCATargets takes CABundleTarget values: in self mode, objects beyond
// the webhook configurations that must trust the operator's CA
// (CRDConversionTarget). The composition root declares them.
const GroupCATargets = `group:"ca-targets"`

// Webhook certificate modes (--webhook-cert-mode).
const (
	ModeExternal = "external" // files mounted by someone else (cert-manager, a Secret volume)
	ModeSelf     = "self"     // [SelfIssued]
)

// Options say where the servers' certificates come from.
type Options struct {
	// WebhookMode is ModeExternal (the default) or ModeSelf.
	WebhookMode string
	// WebhookFiles are the webhook server's files in external mode.
	WebhookFiles Files
	// Self configures ModeSelf.
	Self SelfOptions
	// MetricsFiles are the metrics server's files; without a Dir it gets
	// a self-signed certificate made in memory.
	MetricsFiles Files
	// PollInterval is how often files are re-read (DefaultPollInterval
	// when 0).
	PollInterval time.Duration
}

// Module provides the servers' Certificates (see [New]). Each server starts
// its own Source, so a server that is off reads nothing.
var Module = fx.Module("certs", fx.Provide(New))

// Params are what New needs.
type Params struct {
	fx.In
	Options    Options
	Client     kubernetes.Interface
	Targets    []CABundleTarget `group:"ca-targets"`
	Registerer prometheus.Registerer
	Logger     *zap.Logger
}

// New builds the sources that Options describe and registers their expiry
// and certwatcher's read counters on p.Registerer, at zero whatever the
// mode. It does no I/O.
func New(p Params) (Certificates, error) {
	o := p.Options
	reads := NewReads()
	var c Certificates
	var err error
	switch o.WebhookMode {
	case ModeExternal, "":
		c.Webhook, err = NewFileSource("webhook", o.WebhookFiles, o.PollInterval, reads, p.Logger.Named("webhook"))
	case ModeSelf:
		c.Webhook, err = NewSelfIssued(o.Self, p.Client, p.Logger.Named("webhook"), p.Targets...)
	default:
		err = fmt.Errorf("webhook certificate mode %q (want %s or %s)", o.WebhookMode, ModeExternal, ModeSelf)
	}
	if err != nil {
		return Certificates{}, err
	}
	c.Metrics = &SelfSigned{}
	if o.MetricsFiles.Dir != "" {
		if c.Metrics, err = NewFileSource("metrics", o.MetricsFiles, o.PollInterval, reads, p.Logger.Named("metrics")); err != nil {
			return Certificates{}, err
		}
	}
	for _, m := range []prometheus.Collector{reads.Total, reads.Errors, c.Collector()} {
		if err := p.Registerer.Register(m); err != nil {
			return Certificates{}, fmt.Errorf("register certificate metrics: %w", err)
		}
	}
	return c, nil
}
