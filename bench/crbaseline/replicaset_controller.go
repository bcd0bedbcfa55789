package main

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// The label every ReplicaSet must carry, and the reason of the Event
// recorded when one gets it.
const (
	labelKey      = "hello"
	labelValue    = "world"
	reasonLabeled = "Labeled"
)

// ReplicaSetReconciler labels every ReplicaSet hello=world.
type ReplicaSetReconciler struct {
	client.Client
	Recorder events.EventRecorder
	// MetadataOnlyPods, MetadataOnly, SkipLabeled and Workers are the tuned
	// and expert modes' (tuned.go); zero values are controller-runtime's
	// defaults.
	MetadataOnlyPods bool
	// MetadataOnly watches and reads ReplicaSets as PartialObjectMetadata
	// and patches their label through the metadata client.
	MetadataOnly bool
	// SkipLabeled drops events of ReplicaSets that carry the label.
	SkipLabeled bool
	Workers     int
}

// Reconcile sets the label when it is missing or different, with a merge
// patch that carries only the label, so nothing written concurrently by
// someone else is lost.
func (r *ReplicaSetReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	cached := r.newReplicaSet()
	if err := r.Get(ctx, req.NamespacedName, cached); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !needsLabel(cached) {
		return ctrl.Result{}, nil
	}
	// What the cache returned may be the cache's own (the expert mode
	// turns its deep copy off) and its label map shared with other
	// ReplicaSets: the patch's base only reads it, the label goes on a
	// copy. The copy is the one MergeFrom's base would otherwise take.
	patch := client.MergeFrom(cached)
	rs := cached.DeepCopyObject().(client.Object)
	labels := rs.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[labelKey] = labelValue
	rs.SetLabels(labels)
	if err := r.Patch(ctx, rs, patch); err != nil {
		switch {
		case apierrors.IsNotFound(err):
			return ctrl.Result{}, nil // deleted since the cache saw it
		case apierrors.IsInvalid(err):
			return ctrl.Result{}, reconcile.TerminalError(fmt.Errorf("label replicaset %s: %w", req.NamespacedName, err))
		}
		return ctrl.Result{}, fmt.Errorf("label replicaset %s: %w", req.NamespacedName, err)
	}
	r.Recorder.Eventf(rs, nil, corev1.EventTypeNormal, reasonLabeled, "Label", "Set label %s=%s", labelKey, labelValue)
	return ctrl.Result{}, nil
}

// needsLabel reports whether rs lacks the label; the reconciler and the
// expert mode's event filter decide on it alike.
func needsLabel(rs client.Object) bool {
	return rs.GetLabels()[labelKey] != labelValue
}

// newReplicaSet is what the reconciler reads a ReplicaSet into: the whole
// ReplicaSet by default, its metadata alone when ReplicaSets are watched
// metadata-only (a typed Get would start a second, full informer). The
// metadata client keeps the kind on what it returns, so the Event's
// reference names a ReplicaSet.
func (r *ReplicaSetReconciler) newReplicaSet() client.Object {
	if r.MetadataOnly {
		return replicaSetMetadata()
	}
	return &appsv1.ReplicaSet{}
}

// replicaSetMetadata is a ReplicaSet as a metadata-only watch caches it.
func replicaSetMetadata() *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(appsv1.SchemeGroupVersion.WithKind("ReplicaSet"))
	return m
}

// SetupWithManager watches ReplicaSets and, through their controller owner
// reference, the Pods they own.
func (r *ReplicaSetReconciler) SetupWithManager(mgr ctrl.Manager) error {
	var rsOpts []builder.ForOption
	if r.MetadataOnly {
		rsOpts = append(rsOpts, builder.OnlyMetadata)
	}
	if r.SkipLabeled {
		// A ReplicaSet that carries the label needs no reconcile, and the
		// update the reconciler's own patch causes is the commonest such
		// event: the operator drops them the same way. Pod events still
		// pass (Owns), as the operator's do.
		rsOpts = append(rsOpts, builder.WithPredicates(predicate.NewPredicateFuncs(needsLabel)))
	}
	var podOpts []builder.OwnsOption
	if r.MetadataOnlyPods {
		podOpts = append(podOpts, builder.OnlyMetadata)
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&appsv1.ReplicaSet{}, rsOpts...).
		Owns(&corev1.Pod{}, podOpts...).
		WithOptions(controller.Options{MaxConcurrentReconciles: r.Workers}).
		Complete(r)
}
