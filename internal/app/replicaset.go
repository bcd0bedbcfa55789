package app

import (
	"go.uber.org/fx"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hexagonal-operator/operator/internal/adapters/cache"
	"github.com/hexagonal-operator/operator/internal/adapters/controller"
	"github.com/hexagonal-operator/operator/internal/adapters/controller/predicate"
	"github.com/hexagonal-operator/operator/internal/adapters/kube"
	"github.com/hexagonal-operator/operator/internal/config"
	"github.com/hexagonal-operator/operator/internal/domain/replicaset"
	"github.com/hexagonal-operator/operator/internal/ports"
)

// The resources the operator's own controllers read, watch and write.
var (
	replicaSetsResource = appsv1.SchemeGroupVersion.WithResource("replicasets")
	podsResource        = corev1.SchemeGroupVersion.WithResource("pods")
	replicaSetKind      = appsv1.SchemeGroupVersion.WithKind("ReplicaSet").GroupKind()
)

// pods is the operator's cache of Pods, metadata only and without labels
// or annotations: both controllers only map a Pod to its controller, and
// the ChaosPod one reads its UID and times. Its own type keeps it apart
// from other metadata-only kinds a controller added with [Controller]
// might cache.
type pods struct {
	*cache.Resource[*metav1.PartialObjectMetadata]
}

func newPods(c *cache.Cache) (pods, error) {
	r, err := cache.NewMetadataResource(c, podsResource, "Pod", cache.WithoutLabels, cache.WithoutAnnotations)
	return pods{r}, err
}

// replicaSets is the operator's cache of ReplicaSets, metadata only: the
// reconciler decides on labels alone, and a ReplicaSet's Pod template is
// most of its memory.
type replicaSets struct {
	*cache.Resource[*metav1.PartialObjectMetadata]
}

func newReplicaSets(c *cache.Cache) (replicaSets, error) {
	r, err := cache.NewMetadataResource(c, replicaSetsResource, "ReplicaSet")
	return replicaSets{r}, err
}

// replicaSetOptions wires the ReplicaSet controller: ReplicaSets cached
// metadata only and patched through the metadata client, the domain's
// reconciler, and a controller that watches ReplicaSets and the Pods they
// control.
func replicaSetOptions(cfg config.Config) fx.Option {
	if !cfg.Runs(config.ControllerReplicaSet) {
		return fx.Module("replicaset")
	}
	return fx.Module("replicaset",
		fx.Provide(
			fx.Private,
			newReplicaSets,
			func(c *kube.Clients) (*kube.Writer[*appsv1.ReplicaSet], error) {
				return kube.NewWriter[*appsv1.ReplicaSet](c, replicaSetsResource)
			},
			func(r replicaSets, w *kube.Writer[*appsv1.ReplicaSet], e ports.EventRecorder) (*replicaset.Reconciler, error) {
				return replicaset.New(r, w, e)
			},
		),
		fx.Provide(
			func(r replicaSets, p pods) ReplicaSetWatches {
				return ReplicaSetWatches{ReplicaSets: r, Pods: p}
			},
			fx.Annotate(newReplicaSetController, fx.ResultTags(controller.GroupControllers)),
		),
	)
}

// ReplicaSetWatches are the sources the ReplicaSet controller watches. A
// test may swap them with fx.Decorate.
type ReplicaSetWatches struct {
	ReplicaSets ports.Source
	Pods        ports.Source
}

// newReplicaSetController watches ReplicaSets and the Pods they control.
// ReplicaSet events for objects that already carry the label are dropped:
// the reconcile would be a no-op, and the update caused by the operator's own
// patch is the most common of them.
func newReplicaSetController(cfg config.Config, d controller.Deps, r *replicaset.Reconciler, w ReplicaSetWatches) (*controller.Controller, error) {
	needsLabel := predicate.ObjectFunc(func(o metav1.Object) bool { return replicaset.NeedsLabel(o.GetLabels()) })
	return controller.NewBuilder(config.ControllerReplicaSet, d).
		For(w.ReplicaSets, needsLabel).
		Owns(w.Pods, replicaSetKind).
		Workers(cfg.ReplicaSetWorkers).
		Complete(r)
}
