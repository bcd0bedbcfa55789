package main

import (
	"os"
	"runtime/debug"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// mode is how the baseline configures controller-runtime. The default mode
// is what the kubebuilder scaffold gives; the tuned mode (--tuned) is what
// an experienced controller-runtime user would pick for this job, following
// controller-runtime's own documentation:
//   - MaxConcurrentReconciles equal to the operator's default workers (16
//     for ReplicaSets, 32 for ChaosPods), since reconciles here are one
//     round trip each and the work queue never runs a key twice at once;
//   - owned Pods watched metadata-only (builder.OnlyMetadata): both
//     controllers only map a Pod to its owner, and full Pods are most of
//     the cache;
//   - a cache transform that drops managedFields (cache.
//     TransformStripManagedFields), which nothing reads;
//   - no client-side rate limit (QPS -1): the API server's priority and
//     fairness protects it, and the default 20 qps throttles a backlog;
//   - the operator's GC target (75 unless GOGC is set), whose heap is also
//     mostly a long-lived cache.
type mode struct {
	cache             cache.Options
	metadataOnlyPods  bool
	replicaSetWorkers int
	chaosPodWorkers   int
	gcPercent         int
}

func defaultMode() mode { return mode{} }

func tunedMode() mode {
	return mode{
		cache:             cache.Options{DefaultTransform: cache.TransformStripManagedFields()},
		metadataOnlyPods:  true,
		replicaSetWorkers: 16,
		chaosPodWorkers:   32,
		gcPercent:         75,
	}
}

// apply sets what the mode changes outside the manager's options.
func (m mode) apply(cfg *rest.Config) {
	cfg.QPS = -1
	if m.gcPercent > 0 && os.Getenv("GOGC") == "" {
		debug.SetGCPercent(m.gcPercent)
	}
}

// pod is the object whose informer the readiness check waits for: the one
// the controllers watch Pods through.
func (m mode) pod() client.Object {
	if m.metadataOnlyPods {
		return podMetadata()
	}
	return &corev1.Pod{}
}
