package app

import (
	"context"
	"time"

	"go.uber.org/fx"
	"go.uber.org/zap"
	"k8s.io/client-go/rest"

	"github.com/hexagonal-operator/operator/internal/adapters/cache"
	"github.com/hexagonal-operator/operator/internal/adapters/certs"
	"github.com/hexagonal-operator/operator/internal/adapters/clock"
	"github.com/hexagonal-operator/operator/internal/adapters/controller"
	"github.com/hexagonal-operator/operator/internal/adapters/events"
	"github.com/hexagonal-operator/operator/internal/adapters/health"
	"github.com/hexagonal-operator/operator/internal/adapters/kube"
	"github.com/hexagonal-operator/operator/internal/adapters/leaderelection"
	"github.com/hexagonal-operator/operator/internal/adapters/logging"
	"github.com/hexagonal-operator/operator/internal/adapters/metrics"
	"github.com/hexagonal-operator/operator/internal/adapters/profiling"
	"github.com/hexagonal-operator/operator/internal/adapters/webhook"
	"github.com/hexagonal-operator/operator/internal/config"
)

// preflightTimeout bounds how long start-up waits for the API server before
// giving up with an error naming it (a clear failure within 30 s).
const preflightTimeout = 20 * time.Second

// New builds the operator's fx application for cfg. overrides come last, so
// fx.Replace and fx.Decorate in them win over the defaults.
func New(cfg config.Config, overrides ...fx.Option) *fx.App {
	return fx.New(
		Options(cfg),
		logging.FxLogger,
		fx.StartTimeout(preflightTimeout+10*time.Second),
		fx.StopTimeout(cfg.ShutdownTimeout),
		fx.Options(overrides...),
	)
}

// Options are the operator's modules and wiring for cfg, without fx's own
// settings: what New uses and what fx.ValidateApp checks.
func Options(cfg config.Config) fx.Option {
	return fx.Options(
		fx.Supply(cfg),
		fx.Provide(
			func(c config.Config) (*rest.Config, error) { return kube.LoadRESTConfig(c.Kubeconfig) },
			func(c config.Config) logging.Options {
				return logging.Options{Level: c.ZapLogLevel, Encoder: c.ZapEncoder, Devel: c.ZapDevel,
					StacktraceLevel: c.ZapStacktraceLevel, TimeEncoding: c.ZapTimeEncoding}
			},
			func(c config.Config) cache.Options { return cache.Options{Namespace: c.Namespace} },
			func(c config.Config) metrics.Options {
				return metrics.Options{BindAddress: c.MetricsBindAddress, Secure: c.MetricsSecure, EnableHTTP2: c.EnableHTTP2}
			},
			func(c config.Config) health.Options { return health.Options{BindAddress: c.HealthProbeBindAddress} },
			func(c config.Config) profiling.Options { return profiling.Options{BindAddress: c.PprofBindAddress} },
			func(c config.Config) webhook.Options {
				return webhook.Options{Port: c.WebhookPort, EnableHTTP2: c.EnableHTTP2, ShutdownDelay: c.WebhookShutdownDelay}
			},
			// Each server starts the certificate the certs adapter made for it.
			func(c certs.Certificates) webhook.CertSource { return c.Webhook },
			func(c certs.Certificates) metrics.CertSource { return c.Metrics },
			func(c config.Config) certs.Options {
				return certs.Options{
					WebhookMode:  c.WebhookCertMode,
					WebhookFiles: certs.Files{Dir: c.WebhookCertDir, CertName: c.WebhookCertName, KeyName: c.WebhookCertKey},
					Self: certs.SelfOptions{
						Namespace:                      c.OperatorNamespace,
						SecretName:                     c.WebhookCertSecret,
						ServiceName:                    c.WebhookServiceName,
						MutatingWebhookConfiguration:   c.MutatingWebhookConfiguration,
						ValidatingWebhookConfiguration: c.ValidatingWebhookConfiguration,
					},
					MetricsFiles: certs.Files{Dir: c.MetricsCertPath, CertName: c.MetricsCertName, KeyName: c.MetricsCertKey},
				}
			},
			func(c config.Config) leaderelection.Options {
				return leaderelection.Options{
					Enabled:       c.LeaderElect,
					ID:            c.LeaderElectionID,
					Namespace:     c.LeaderElectionNamespace,
					LeaseDuration: c.LeaseDuration,
					RenewDeadline: c.RenewDeadline,
					RetryPeriod:   c.RetryPeriod,
				}
			},
		),
		// Where no dependency orders two parts, the order of the modules'
		// invokes below does: the preflight checks run before anything
		// listens or watches; the metrics server and the API server probe
		// start early and stop late, so a shutdown is observed; the webhook
		// server listens before the informers start, as it needs none; the
		// elector campaigns after both, so it releases the Lease before the
		// server drains; the probes start before, and stop after, the
		// controllers.
		logging.Module,
		preflightChecks(cfg),
		metrics.Module,
		kube.Module,
		certs.Module,
		webhook.Module,
		cache.Module,
		events.Module,
		leaderelection.Module,
		fx.Provide(func(e *leaderelection.Elector) controller.LeaderElector { return e }),
		// What the parts other than the controllers ask of the API
		// server; each controller declares its own (Controller).
		providePermissions(leaderElectionPermissions),
		providePermissions(selfCertPermissions),
		providePermissions(metricsAuthPermissions),
		clock.Module,
		healthChecks,
		health.Module,
		profiling.Module,
		controller.Module,
		fx.Provide(cachedSources),
		PodWebhooks,
		replicaSetController(cfg),
		chaosPodOptions(cfg),
	)
}

// fx.As checks this only at run time.
var _ health.Check = webhook.Readiness{}

// preflightChecks fail start-up with a clear message before any server,
// informer or controller starts: the API server answers, the operator may
// do what its enabled parts will do, and the ChaosPod CRD is installed, in
// this order. Nothing depends on a check, so the graph cannot place them:
// this is the one step the order of invokes states.
func preflightChecks(cfg config.Config) fx.Option {
	checks := []fx.Option{fx.Invoke(preflight), fx.Invoke(permissionCheck)}
	if cfg.Runs(config.ControllerChaosPod) {
		checks = append(checks, fx.Invoke(chaosPodCRDCheck))
	}
	return fx.Module("preflight", checks...)
}

// healthChecks are the parts' checks the probes serve: the caches' sync
// and the webhook server's certificate for readiness, the elector's
// renewal and the controllers' progress for liveness.
var healthChecks = fx.Provide(
	fx.Annotate(func(c *cache.Cache) health.Check { return c }, fx.ResultTags(health.GroupReadyz)),
	fx.Annotate((*webhook.Server).ReadinessCheck, fx.As(new(health.Check)), fx.ResultTags(health.GroupReadyz)),
	fx.Annotate(func(e *leaderelection.Elector) health.Check { return e }, fx.ResultTags(health.GroupHealthz)),
	fx.Annotate(func(p struct {
		fx.In
		Controllers []*controller.Controller `group:"controllers"`
	}) []health.Check {
		checks := make([]health.Check, 0, len(p.Controllers))
		for _, c := range p.Controllers {
			checks = append(checks, c.StuckCheck())
		}
		return checks
	}, fx.ResultTags(`group:"healthz,flatten"`)),
)

// preflight fails start-up, with the server's address, when the API server
// cannot be reached.
func preflight(lc fx.Lifecycle, cfg *rest.Config, log *zap.Logger) {
	lc.Append(fx.Hook{OnStart: func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, preflightTimeout)
		defer cancel()
		if err := kube.Preflight(ctx, cfg); err != nil {
			return err
		}
		log.Info("api server reachable", zap.String("host", cfg.Host))
		return nil
	}})
}
