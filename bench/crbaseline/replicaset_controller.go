package main

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
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
	// MetadataOnlyPods and Workers are the tuned mode's (--tuned); zero
	// values are controller-runtime's defaults.
	MetadataOnlyPods bool
	Workers          int
}

// Reconcile sets the label when it is missing or different, with a merge
// patch that carries only the label, so nothing written concurrently by
// someone else is lost.
func (r *ReplicaSetReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var rs appsv1.ReplicaSet
	if err := r.Get(ctx, req.NamespacedName, &rs); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if rs.Labels[labelKey] == labelValue {
		return ctrl.Result{}, nil
	}
	patch := client.MergeFrom(rs.DeepCopy())
	if rs.Labels == nil {
		rs.Labels = map[string]string{}
	}
	rs.Labels[labelKey] = labelValue
	if err := r.Patch(ctx, &rs, patch); err != nil {
		switch {
		case apierrors.IsNotFound(err):
			return ctrl.Result{}, nil // deleted since the cache saw it
		case apierrors.IsInvalid(err):
			return ctrl.Result{}, reconcile.TerminalError(fmt.Errorf("label replicaset %s: %w", req.NamespacedName, err))
		}
		return ctrl.Result{}, fmt.Errorf("label replicaset %s: %w", req.NamespacedName, err)
	}
	r.Recorder.Eventf(&rs, nil, corev1.EventTypeNormal, reasonLabeled, "Label", "Set label %s=%s", labelKey, labelValue)
	return ctrl.Result{}, nil
}

// SetupWithManager watches ReplicaSets and, through their controller owner
// reference, the Pods they own.
func (r *ReplicaSetReconciler) SetupWithManager(mgr ctrl.Manager) error {
	var podOpts []builder.OwnsOption
	if r.MetadataOnlyPods {
		podOpts = append(podOpts, builder.OnlyMetadata)
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&appsv1.ReplicaSet{}).
		Owns(&corev1.Pod{}, podOpts...).
		WithOptions(controller.Options{MaxConcurrentReconciles: r.Workers}).
		Complete(r)
}
