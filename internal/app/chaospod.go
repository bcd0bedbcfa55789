package app

import (
	"context"
	"fmt"

	"go.uber.org/fx"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	chaosv1 "github.com/hexagonal-operator/operator/api/chaos/v1"
	"github.com/hexagonal-operator/operator/internal/adapters/cache"
	"github.com/hexagonal-operator/operator/internal/adapters/certs"
	"github.com/hexagonal-operator/operator/internal/adapters/kube"
	"github.com/hexagonal-operator/operator/internal/adapters/webhook"
	"github.com/hexagonal-operator/operator/internal/config"
	"github.com/hexagonal-operator/operator/internal/domain/chaospod"
	"github.com/hexagonal-operator/operator/internal/ports"
)

// chaosPodOptions wires the ChaosPod workload: its admission rules (and
// the rule for the operator's own Pods, which reads ChaosPods) and
// conversion always (webhooks serve on every replica, whatever
// --controllers says), and its controller when cfg runs "chaospod".
func chaosPodOptions(cfg config.Config) fx.Option {
	opts := []fx.Option{
		// The operator's Pod rule reads the ChaosPod a Pod names from the
		// API server, on every replica, never from a cache: a cache may
		// still hold a ChaosPod deleted a moment ago, and the rule admits
		// on what it reads. (The reconciler reads the cache its For
		// declares.)
		fx.Provide(
			fx.Private,
			func(c *kube.Clients) (ports.Reader[*chaosv1.ChaosPod], error) {
				r, err := kube.NewReader[*chaosv1.ChaosPod](c, chaosv1.GroupVersionResource)
				if err != nil {
					return nil, err
				}
				return r, nil
			},
		),
		providePermissions(func(cfg config.Config) []Permission {
			return []Permission{{Role: ManagerRole, Verbs: []string{"get"}, Group: chaosv1.GroupName, Resource: chaosv1.Resource, Namespace: cfg.Namespace,
				Why: "the operator's Pod validator reads the ChaosPod a Pod names from the API server, never from a cache"}}
		}),
		ChaosPodWebhooks,
		OperatorPodWebhooks,
		CRDConversion(ChaosPodConversion()),
	}
	if cfg.Runs(config.ControllerChaosPod) {
		opts = append(opts, Controller(config.ControllerChaosPod, chaospod.New,
			For[*chaosv1.ChaosPod](chaosv1.GroupVersionResource, Writes(Update, UpdateStatus)),
			// Its own Pods only, typed for their status, trimmed to what
			// the reconciler reads: the replicaset controller's informer of
			// every Pod holds their metadata, not their status.
			Owns[*corev1.Pod](podsResource, Selector(chaospod.PodSelector()), Trim(chaosPodTrim), Writes(Create, Delete)),
			Workers(cfg.ChaosPodWorkers),
		))
	}
	return fx.Module("chaospod", opts...)
}

// chaosPodTrim is how the chaospod controller caches its Pods.
var chaosPodTrim = cache.TrimOf("trimmed by chaospod.TrimPod", chaospod.TrimPod)

// chaosPodCRDCheck fails start-up with one clear line when the ChaosPod
// CRD is missing, instead of an informer that retries forever.
func chaosPodCRDCheck(lc fx.Lifecycle, cfg config.Config, dyn dynamic.Interface, log *zap.Logger) {
	lc.Append(fx.Hook{OnStart: func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, preflightTimeout)
		defer cancel()
		_, err := dyn.Resource(chaosv1.GroupVersionResource).Namespace(cfg.Namespace).List(ctx, metav1.ListOptions{Limit: 1})
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("missing CRD chaospods.%s: install config/crd or run without the chaospod controller (--controllers=replicaset)", chaosv1.GroupName)
		}
		if err != nil {
			return fmt.Errorf("check CRD chaospods.%s: %w", chaosv1.GroupName, err)
		}
		log.Info("crd installed", zap.String("name", "chaospods."+chaosv1.GroupName))
		return nil
	}})
}

// CRDConversion serves the conversion webhook of the CRD conv.CRD at
// conv.Path. In self cert mode the operator also writes its CA into the
// CRD's conversion config, as it does into the webhook configurations,
// with the permission that takes; `manifests` renders the CRD's
// conversion settings.
func CRDConversion(conv webhook.Conversion) fx.Option {
	return fx.Options(
		fx.Provide(fx.Annotate(func() webhook.Conversion { return conv }, fx.ResultTags(webhook.GroupConversions))),
		fx.Provide(fx.Annotate(func(dyn dynamic.Interface) certs.CABundleTarget {
			return certs.CRDConversionTarget(dyn, conv.CRD)
		}, fx.ResultTags(certs.GroupCATargets))),
		providePermissions(conversionPermissions(conv.CRD)),
	)
}
