package app

import (
	"go.uber.org/fx"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hexagonal-operator/operator/internal/adapters/cache"
	"github.com/hexagonal-operator/operator/internal/adapters/controller/predicate"
	"github.com/hexagonal-operator/operator/internal/config"
	"github.com/hexagonal-operator/operator/internal/domain/replicaset"
)

// The resources the operator's own controllers read, watch and write.
var (
	replicaSetsResource = appsv1.SchemeGroupVersion.WithResource("replicasets")
	podsResource        = corev1.SchemeGroupVersion.WithResource("pods")
)

// replicaSetController labels ReplicaSets when cfg runs it. It caches them metadata only
// (the reconciler decides on labels alone, and a ReplicaSet's Pod template
// is most of its memory) and drops the events of those that already carry
// the label: their reconcile would be a no-op, and the update caused by the
// operator's own patch is the most common of them. The reconciler does not
// read Pods, which only queue their ReplicaSet: every Pod is cached, so
// metadata only and without labels or annotations, which mapping a Pod to
// its controller does not need.
func replicaSetController(cfg config.Config) fx.Option {
	if !cfg.Runs(config.ControllerReplicaSet) {
		return fx.Options()
	}
	needsLabel := predicate.ObjectFunc(func(o metav1.Object) bool { return replicaset.NeedsLabel(o.GetLabels()) })
	return Controller(config.ControllerReplicaSet, replicaset.New,
		For[*appsv1.ReplicaSet](replicaSetsResource, MetadataOnly(), WithPredicates(needsLabel), Writes(PatchMetadata)),
		Owns[*corev1.Pod](podsResource, MetadataOnly(), Trim(cache.WithoutLabels, cache.WithoutAnnotations), WatchOnly()),
		Workers(cfg.ReplicaSetWorkers),
	)
}
