package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	chaosv1 "github.com/hexagonal-operator/operator/bench/crbaseline/api/v1"
)

// Event reasons of the ChaosPod controller.
const (
	reasonPodCreated = "PodCreated"
	reasonPodStopped = "PodStopped"
)

// ChaosPodReconciler runs a ChaosPod's Pod and stops it at spec.nextStop,
// again and again, as controller-runtime's original ChaosPod example does.
type ChaosPodReconciler struct {
	client.Client
	Recorder events.EventRecorder
	// MetadataOnlyPods and Workers are the tuned and expert modes'
	// (tuned.go); zero values are controller-runtime's defaults.
	MetadataOnlyPods bool
	Workers          int
}

// Reconcile moves the ChaosPod one step through its cycle: no Pod → create
// it and record the run; a Pod whose nextStop has passed → delete it (the
// next reconcile re-creates it); a Pod whose nextStop is ahead → requeue for
// exactly then.
func (r *ChaosPodReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var cp chaosv1.ChaosPod
	if err := r.Get(ctx, req.NamespacedName, &cp); err != nil {
		// Gone: its Pod goes with it through the owner reference.
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !cp.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}

	pod := r.newPod()
	err := r.Get(ctx, req.NamespacedName, pod)
	switch {
	case apierrors.IsNotFound(err):
		return r.startPod(ctx, &cp)
	case err != nil:
		return ctrl.Result{}, fmt.Errorf("get pod %s: %w", req.NamespacedName, err)
	}
	if ref := metav1.GetControllerOf(pod); ref == nil || ref.UID != cp.UID {
		return ctrl.Result{}, reconcile.TerminalError(fmt.Errorf("pod %s exists and is not controlled by chaospod %s", req.NamespacedName, req.NamespacedName))
	}
	if pod.GetDeletionTimestamp() != nil {
		return ctrl.Result{}, nil // stopping; its deletion brings the next reconcile
	}

	now := time.Now()
	created := pod.GetCreationTimestamp()
	if !recorded(&cp, created) || cp.Spec.NextStop == nil {
		return r.recordRun(ctx, &cp, created, now)
	}
	if wait := cp.Spec.NextStop.Sub(now); wait > 0 {
		return ctrl.Result{RequeueAfter: wait}, nil
	}
	uid := pod.GetUID()
	err = r.Delete(ctx, pod, client.Preconditions{UID: &uid})
	switch {
	case apierrors.IsNotFound(err), apierrors.IsConflict(err):
		return ctrl.Result{}, nil // gone or replaced meanwhile; its events follow
	case err != nil:
		return ctrl.Result{}, fmt.Errorf("stop pod %s: %w", req.NamespacedName, err)
	}
	r.Recorder.Eventf(&cp, nil, corev1.EventTypeNormal, reasonPodStopped, "Delete", "Stopped pod %s", pod.GetName())
	return ctrl.Result{}, nil
}

// newPod is what the reconciler reads a Pod into: the whole Pod by
// default, its metadata alone when the Pods are watched metadata-only (a
// typed Get would start a second, full informer of every Pod).
func (r *ChaosPodReconciler) newPod() client.Object {
	if r.MetadataOnlyPods {
		return podMetadata()
	}
	return &corev1.Pod{}
}

// podMetadata is a Pod as a metadata-only watch caches it.
func podMetadata() *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Pod"))
	return m
}

// recorded reports whether status.lastRun already names the run of the
// Pod created at created.
func recorded(cp *chaosv1.ChaosPod, created metav1.Time) bool {
	return cp.Status.LastRun != nil && cp.Status.LastRun.Equal(&created)
}

func (r *ChaosPodReconciler) startPod(ctx context.Context, cp *chaosv1.ChaosPod) (ctrl.Result, error) {
	template := cp.Spec.Template.DeepCopy()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:        cp.Name,
			Namespace:   cp.Namespace,
			Labels:      template.Labels,
			Annotations: template.Annotations,
		},
		Spec: template.Spec,
	}
	if err := ctrl.SetControllerReference(cp, pod, r.Scheme()); err != nil {
		return ctrl.Result{}, fmt.Errorf("own pod %s/%s: %w", cp.Namespace, cp.Name, err)
	}
	err := r.Create(ctx, pod)
	switch {
	case apierrors.IsAlreadyExists(err):
		// The cache has not seen it yet; its add event brings a retry.
		return ctrl.Result{}, nil
	case apierrors.IsInvalid(err):
		return ctrl.Result{}, reconcile.TerminalError(fmt.Errorf("create pod %s/%s: %w", cp.Namespace, cp.Name, err))
	case err != nil:
		return ctrl.Result{}, fmt.Errorf("create pod %s/%s: %w", cp.Namespace, cp.Name, err)
	}
	r.Recorder.Eventf(cp, nil, corev1.EventTypeNormal, reasonPodCreated, "Create", "Created pod %s", pod.Name)
	return r.recordRun(ctx, cp, pod.CreationTimestamp, time.Now())
}

// recordRun writes spec.nextStop (unless this run's stop is there already)
// and status.lastRun = created, then requeues for the stop. cp is as the
// cache returned it.
func (r *ChaosPodReconciler) recordRun(ctx context.Context, cp *chaosv1.ChaosPod, created metav1.Time, now time.Time) (ctrl.Result, error) {
	stop := ceilSecond(now.Add(interval(cp)))
	// A nextStop after the Pod's creation and no later than now+interval
	// was written for this run already (by an earlier, interrupted attempt)
	// or moved earlier by a user: keep it.
	keepStop := false
	if ns := cp.Spec.NextStop; ns != nil && ns.After(created.Time) && !ns.After(stop) {
		stop, keepStop = ns.Time, true
	}
	if keepStop && recorded(cp, created) {
		return ctrl.Result{RequeueAfter: max(stop.Sub(now), 0)}, nil
	}
	// A write follows, and the client decodes its answer into the object
	// it writes, in place: cp may be the cache's own (the expert mode turns
	// its deep copy off), with maps and times it shares, so write a copy.
	cp = cp.DeepCopy()
	if !keepStop {
		cp.Spec.NextStop = &metav1.Time{Time: stop}
		if err := r.Update(ctx, cp); err != nil {
			return ctrl.Result{}, writeErr("set nextStop of chaospod", cp, err)
		}
	}
	if !recorded(cp, created) {
		cp.Status.LastRun = created.DeepCopy()
		if err := r.Status().Update(ctx, cp); err != nil {
			return ctrl.Result{}, writeErr("set lastRun of chaospod", cp, err)
		}
	}
	return ctrl.Result{RequeueAfter: max(stop.Sub(now), 0)}, nil
}

// interval is how long each Pod of cp lives: the stop-interval annotation
// (v2's spec.stop.interval) when it parses to a positive duration, else a
// random 10s or 20s, as the original example does.
func interval(cp *chaosv1.ChaosPod) time.Duration {
	if raw, ok := cp.Annotations[chaosv1.StopIntervalAnnotation]; ok {
		if d, err := time.ParseDuration(raw); err == nil && d > 0 {
			return d
		}
	}
	if rand.N(2) == 0 {
		return 10 * time.Second
	}
	return 20 * time.Second
}

// ceilSecond rounds t up to a whole second: spec.nextStop is stored with
// second precision, so requeueing for the unrounded time would stop a Pod
// up to a second after the nextStop users see.
func ceilSecond(t time.Time) time.Time {
	if r := t.Truncate(time.Second); !r.Equal(t) {
		return r.Add(time.Second)
	}
	return t
}

// writeErr ignores a ChaosPod deleted meanwhile and gives up on one the API
// server calls invalid; anything else is retried with backoff.
func writeErr(what string, cp *chaosv1.ChaosPod, err error) error {
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case apierrors.IsInvalid(err):
		return reconcile.TerminalError(fmt.Errorf("%s %s/%s: %w", what, cp.Namespace, cp.Name, err))
	}
	return fmt.Errorf("%s %s/%s: %w", what, cp.Namespace, cp.Name, err)
}

// SetupWithManager watches ChaosPods and, through their controller owner
// reference, their Pods.
func (r *ChaosPodReconciler) SetupWithManager(mgr ctrl.Manager) error {
	var podOpts []builder.OwnsOption
	if r.MetadataOnlyPods {
		podOpts = append(podOpts, builder.OnlyMetadata)
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&chaosv1.ChaosPod{}).
		Owns(&corev1.Pod{}, podOpts...).
		WithOptions(controller.Options{MaxConcurrentReconciles: r.Workers}).
		Complete(r)
}
