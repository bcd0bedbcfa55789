package main

import (
	"os"
	"runtime/debug"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The operator's default workers (its --replicaset-workers and
// --chaospod-workers): the tuned and expert modes run as many reconciles
// at once. Reconciles here are one round trip each and the work queue
// never runs a key twice at once; ChaosPod stops fall due together on
// whole seconds, so a stop that finds no idle worker waits a DELETE round
// trip for one.
const (
	operatorReplicaSetWorkers = 16
	operatorChaosPodWorkers   = 128
)

// The operator's garbage collector settings: a target of 75 unless GOGC
// is set, and the heap floor of its --gc-heap-floor default (see
// gcfloor.go).
const (
	operatorGCPercent   = 75
	operatorGCHeapFloor = 16 << 20
)

// mode is how the baseline configures controller-runtime (README.md says
// why each option is there):
//   - default: what the kubebuilder scaffold gives;
//   - tuned (--tuned): the options an experienced controller-runtime user
//     picks first from its documentation: the operator's worker counts,
//     owned Pods watched metadata-only (builder.OnlyMetadata),
//     cache.TransformStripManagedFields, no client-side rate limit (QPS
//     -1) and the operator's GC target;
//   - expert (--expert): everything the operator does that
//     controller-runtime offers: tuned, plus ReplicaSets watched and read
//     metadata-only and labeled through a metadata patch, Pods cached
//     without labels and annotations, a predicate that drops ReplicaSet
//     events for ReplicaSets already labeled (the reconciler's own patch
//     echoing back, most of all), and the operator's heap floor.
type mode struct {
	cache             cache.Options
	metadataOnlyPods  bool
	metadataOnlyRS    bool
	skipLabeled       bool
	replicaSetWorkers int
	chaosPodWorkers   int
	unlimitedQPS      bool
	gcPercent         int
	gcHeapFloor       uint64
}

func defaultMode() mode { return mode{} }

func tunedMode() mode {
	return mode{
		cache:             cache.Options{DefaultTransform: cache.TransformStripManagedFields()},
		metadataOnlyPods:  true,
		replicaSetWorkers: operatorReplicaSetWorkers,
		chaosPodWorkers:   operatorChaosPodWorkers,
		unlimitedQPS:      true,
		gcPercent:         operatorGCPercent,
	}
}

func expertMode() mode {
	m := tunedMode()
	m.cache = cache.Options{
		// Everything cached loses managedFields, which nothing reads.
		DefaultTransform: cache.TransformStripManagedFields(),
		// Pods also lose labels and annotations, as the operator's Pod
		// cache does: both controllers only map a Pod to its controller
		// through owner references, and the ChaosPod reconciler reads a
		// Pod's UID, times and owner. ReplicaSets keep their labels (the
		// reconciler decides on them).
		ByObject: map[client.Object]cache.ByObject{
			&corev1.Pod{}: {Transform: stripPodMetadata()},
		},
	}
	m.metadataOnlyRS = true
	m.skipLabeled = true
	m.gcHeapFloor = operatorGCHeapFloor
	return m
}

// stripPodMetadata is the Pods' cache transform in the expert mode: it
// drops managedFields, labels and annotations. It works on full Pods and
// on the PartialObjectMetadata a metadata-only watch delivers alike.
func stripPodMetadata() toolscache.TransformFunc {
	return func(in any) (any, error) {
		if obj, err := meta.Accessor(in); err == nil {
			if obj.GetManagedFields() != nil {
				obj.SetManagedFields(nil)
			}
			obj.SetLabels(nil)
			obj.SetAnnotations(nil)
		}
		return in, nil
	}
}

// apply sets what the mode changes outside the manager's options: the
// client's rate limit and the garbage collector, for the process's life.
func (m mode) apply(cfg *rest.Config) {
	if m.unlimitedQPS {
		cfg.QPS = -1
	}
	if m.gcPercent > 0 && os.Getenv("GOGC") == "" {
		debug.SetGCPercent(m.gcPercent)
	}
	startGCFloor(m.gcHeapFloor)
}

// pod is the object whose informer the readiness check waits for: the one
// the controllers watch Pods through.
func (m mode) pod() client.Object {
	if m.metadataOnlyPods {
		return podMetadata()
	}
	return &corev1.Pod{}
}

// replicaSet is the object whose informer the readiness check waits for:
// the one the ReplicaSet controller watches ReplicaSets through.
func (m mode) replicaSet() client.Object {
	if m.metadataOnlyRS {
		return replicaSetMetadata()
	}
	return &appsv1.ReplicaSet{}
}
