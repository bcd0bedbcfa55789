package main

import (
	"errors"
	"os"
	"runtime/debug"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
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
//     echoing back, most of all), reads without deep copy, equal metadata
//     shared between cached objects, the Pod mutation as a raw admission
//     handler, the priority queue set explicitly (--priority-queue=false
//     gives the plain queue) and the operator's heap floor.
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
	// rawPodMutator serves the Pod mutation through rawPodMutator instead
	// of the typed defaulter.
	rawPodMutator bool
	// usePriorityQueue is the manager's controller option; nil leaves it
	// to controller-runtime.
	usePriorityQueue *bool
}

// newMode is the mode the flags ask for. priorityQueue is
// --priority-queue, which only the expert mode reads: the flag parser
// refuses it without --expert.
func newMode(tuned, expert, priorityQueue bool) (mode, error) {
	switch {
	case tuned && expert:
		return mode{}, errors.New("--tuned and --expert exclude each other")
	case tuned:
		return tunedMode(), nil
	case expert:
		m := expertMode()
		m.usePriorityQueue = ptr.To(priorityQueue)
		return m, nil
	}
	return defaultMode(), nil
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
	// One interner for the whole cache, so that objects of different
	// informers share too (a ChaosPod's Pod and another's).
	in := newInterner()
	m.cache = cache.Options{
		// Everything cached loses managedFields, which nothing reads, and
		// shares equal metadata with other cached objects.
		DefaultTransform: in.transform(cache.TransformStripManagedFields()),
		// Pods also lose labels and annotations, as the operator's Pod
		// cache does: both controllers only map a Pod to its controller
		// through owner references, and the ChaosPod reconciler reads a
		// Pod's UID, times and owner. ReplicaSets keep their labels (the
		// reconciler decides on them). A ByObject transform replaces the
		// default one, so it interns too.
		ByObject: map[client.Object]cache.ByObject{
			&corev1.Pod{}: {Transform: in.transform(stripPodMetadata())},
		},
		// Reads return the cache's own objects: the reconcilers copy one
		// before they change it, and only then.
		DefaultUnsafeDisableDeepCopy: ptr.To(true),
	}
	m.metadataOnlyRS = true
	m.skipLabeled = true
	m.rawPodMutator = true
	m.usePriorityQueue = ptr.To(true)
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

// configureClient sets what the mode changes of the client's
// configuration: its rate limit.
func (m mode) configureClient(cfg *rest.Config) {
	if m.unlimitedQPS {
		cfg.QPS = -1
	}
}

// configureGC sets the garbage collector's target and floor, for the
// process's life.
func (m mode) configureGC() {
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
