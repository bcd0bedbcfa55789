package chaospod

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	chaosv1 "github.com/hexagonal-operator/operator/api/chaos/v1"
	"github.com/hexagonal-operator/operator/internal/ports"
)

// Event reasons. The Warning ones name the cause in their note, the API
// server's words included.
const (
	ReasonPodCreated = "PodCreated"
	ReasonPodStopped = "PodStopped"
	// ReasonPodCreateFailed (Warning): the API server refused the Pod.
	ReasonPodCreateFailed = chaosv1.ReasonPodCreateFailed
	// ReasonPodNotControlled (Warning): a Pod of the ChaosPod's name is
	// not its own.
	ReasonPodNotControlled = chaosv1.ReasonPodNotControlled
	// ReasonUpdateFailed (Warning): the API server refused a write to the
	// ChaosPod as invalid.
	ReasonUpdateFailed = "UpdateFailed"
)

// Reconciler runs the ChaosPod Pod cycle. Build it with New.
type Reconciler struct {
	chaosPods ports.Reader[*chaosv1.ChaosPod]
	chaosW    ports.Writer[*chaosv1.ChaosPod]
	pods      ports.Reader[*corev1.Pod]
	podW      ports.Writer[*corev1.Pod]
	events    ports.EventRecorder
	clock     ports.Clock
	// coin picks the interval of a v1 ChaosPod without one.
	coin func() bool
	// stops holds starts back while stops are in flight.
	stops stopGate
}

var _ ports.Reconciler = (*Reconciler)(nil)

// New returns a Reconciler. Every dependency is required. pods needs to
// hold only the Pods [PodSelector] selects, and of each only what
// [TrimPod] keeps.
func New(chaosPods ports.Reader[*chaosv1.ChaosPod], chaosWriter ports.Writer[*chaosv1.ChaosPod],
	pods ports.Reader[*corev1.Pod], podWriter ports.Writer[*corev1.Pod],
	events ports.EventRecorder, clock ports.Clock,
) (*Reconciler, error) {
	if chaosPods == nil || chaosWriter == nil || pods == nil || podWriter == nil || events == nil || clock == nil {
		return nil, errors.New("chaospod reconciler: chaospod reader and writer, pod reader and writer, event recorder and clock are required")
	}
	return &Reconciler{
		chaosPods: chaosPods, chaosW: chaosWriter, pods: pods, podW: podWriter, events: events, clock: clock,
		coin: func() bool { return rand.N(2) == 0 },
	}, nil
}

// Interval is how long each Pod of cp lives: the stop-interval annotation
// when it parses to a positive duration, else 10s or 20s by coin.
func Interval(cp *chaosv1.ChaosPod, coin func() bool) time.Duration {
	if raw, ok := cp.Annotations[chaosv1.StopIntervalAnnotation]; ok {
		if d, err := time.ParseDuration(raw); err == nil && d > 0 {
			return d
		}
	}
	if coin() {
		return 10 * time.Second
	}
	return 20 * time.Second
}

// Reconcile moves the ChaosPod req one step through its cycle.
func (r *Reconciler) Reconcile(ctx context.Context, req ports.Request) (ports.Result, error) {
	key := req.NamespacedName
	cp, err := r.chaosPods.Get(ctx, key)
	if errors.Is(err, ports.ErrNotFound) {
		return ports.Result{}, nil // its Pod goes with it (owner reference)
	}
	if err != nil {
		return ports.Result{}, fmt.Errorf("get chaospod %s: %w", key, err)
	}
	if cp.DeletionTimestamp != nil {
		return ports.Result{}, nil
	}
	pod, err := r.pods.Get(ctx, key)
	switch {
	case errors.Is(err, ports.ErrNotFound):
		// Stops first: they are promised for their time, a start is not.
		if err := r.stops.wait(ctx, MaxStartDelay); err != nil {
			return ports.Result{}, err
		}
		return r.startPod(ctx, cp)
	case err != nil:
		return ports.Result{}, fmt.Errorf("get pod %s: %w", key, err)
	}
	if ref := metav1.GetControllerOfNoCopy(pod); ref == nil || ref.UID != cp.UID {
		msg := fmt.Sprintf("Pod %s exists and is not controlled by this ChaosPod", key.Name)
		r.events.Eventf(cp, ports.EventTypeWarning, ReasonPodNotControlled, "Create", "%s", msg)
		if err := r.setReady(ctx, cp, ready(cp, metav1.ConditionFalse, chaosv1.ReasonPodNotControlled, msg)); err != nil {
			return ports.Result{}, err
		}
		return ports.Result{}, ports.Terminal(fmt.Errorf("pod %s exists and is not controlled by chaospod %s", key, key))
	}
	if pod.DeletionTimestamp != nil {
		// Stopping; its deletion brings the next reconcile.
		return ports.Result{}, r.setReady(ctx, cp, ready(cp, metav1.ConditionFalse, chaosv1.ReasonPodReplacing,
			fmt.Sprintf("Pod %s was stopped and is terminating; the next one starts once it is gone", key.Name)))
	}
	now := r.clock.Now()
	if !recorded(cp, pod) || cp.Spec.NextStop == nil {
		return r.recordRun(ctx, cp, pod, now)
	}
	if wait := cp.Spec.NextStop.Sub(now); wait > 0 {
		// Written only when the condition says otherwise: the Pod's state
		// changed (each change of its status brings a reconcile), or a
		// user's edit made a generation. Whatever the Pod's state, it is
		// stopped at nextStop.
		if err := r.setReady(ctx, cp, podReady(cp, pod, cp.Spec.NextStop.Time)); err != nil {
			return ports.Result{}, err
		}
		return ports.Result{RequeueAfter: wait}, nil
	}
	switch err := r.stopPod(ctx, key, pod.UID); {
	case errors.Is(err, ports.ErrNotFound), errors.Is(err, ports.ErrConflict):
		return ports.Result{}, nil // gone or replaced meanwhile; events follow
	case err != nil:
		return ports.Result{}, fmt.Errorf("stop pod %s: %w", key, err)
	}
	// The stop's Event waits for the other stops in flight, as starts do:
	// it is one more write for the API server in the middle of their
	// burst. Only the operator stopping ends the wait early, and the Event
	// is recorded all the same.
	_ = r.stops.wait(ctx, MaxStartDelay)
	r.events.Eventf(cp, ports.EventTypeNormal, ReasonPodStopped, "Delete", "Stopped pod %s", key.Name)
	return ports.Result{}, nil
}

// stopPod deletes the Pod key of uid, counted as a stop in flight while
// the DELETE lasts.
func (r *Reconciler) stopPod(ctx context.Context, key types.NamespacedName, uid types.UID) error {
	r.stops.begin()
	defer r.stops.end()
	return r.podW.Delete(ctx, key, uid)
}

// recorded reports whether status.lastRun already names pod's run.
func recorded(cp *chaosv1.ChaosPod, pod *corev1.Pod) bool {
	return cp.Status.LastRun != nil && cp.Status.LastRun.Equal(&pod.CreationTimestamp)
}

func (r *Reconciler) startPod(ctx context.Context, cp *chaosv1.ChaosPod) (ports.Result, error) {
	key := types.NamespacedName{Namespace: cp.Namespace, Name: cp.Name}
	created, err := r.podW.Create(ctx, PodFor(cp))
	switch {
	case errors.Is(err, ports.ErrAlreadyExists):
		return ports.Result{}, r.podUnseen(ctx, cp, err)
	case errors.Is(err, ports.ErrInvalid), errors.Is(err, ports.ErrForbidden):
		return ports.Result{}, r.createRefused(ctx, cp, err)
	case err != nil:
		return ports.Result{}, fmt.Errorf("create pod %s: %w", key, err)
	}
	r.events.Eventf(cp, ports.EventTypeNormal, ReasonPodCreated, "Create", "Created pod %s", key.Name)
	return r.recordRun(ctx, cp, created, r.clock.Now())
}

// podUnseen reports a create refused because a Pod of the ChaosPod's name
// exists that the reader does not hold: it lacks [PodLabel] (another's
// Pod, or one of the operator's whose label was taken off), or it was
// created a moment ago and its add event, which brings the next
// reconcile, is on its way. Ready=False and a Warning Event say so, and
// the error is retried with back-off: no event of a Pod the reader does
// not select says when it goes.
func (r *Reconciler) podUnseen(ctx context.Context, cp *chaosv1.ChaosPod, err error) error {
	msg := fmt.Sprintf("Pod %s exists and is not one this ChaosPod runs: it lacks the label %s=%s of the operator's Pods", cp.Name, PodLabel, cp.Name)
	r.events.Eventf(cp, ports.EventTypeWarning, ReasonPodNotControlled, "Create", "%s", msg)
	if serr := r.setReady(ctx, cp, ready(cp, metav1.ConditionFalse, chaosv1.ReasonPodNotControlled, msg)); serr != nil {
		return serr
	}
	return fmt.Errorf("create pod %s/%s: %w", cp.Namespace, cp.Name, err)
}

// recordRun writes spec.nextStop (unless this run's stop is already there)
// and status.lastRun = pod's creation, with Ready as pod says, then
// requeues for the stop.
func (r *Reconciler) recordRun(ctx context.Context, cp *chaosv1.ChaosPod, pod *corev1.Pod, now time.Time) (ports.Result, error) {
	created := pod.CreationTimestamp
	interval := Interval(cp, r.coin)
	next := cp.DeepCopy()
	stop := ceilSecond(now.Add(interval))
	// A nextStop after the Pod's creation and no later than now+interval
	// was written for this run already (by an earlier, interrupted
	// attempt) or moved earlier by a user: keep it.
	if ns := cp.Spec.NextStop; ns != nil && ns.After(created.Time) && !ns.After(stop) {
		stop = ns.Time
	} else {
		next.Spec.NextStop = &metav1.Time{Time: stop}
		updated, err := r.chaosW.Update(ctx, next)
		if err != nil {
			return ports.Result{}, r.writeErr(cp, "set nextStop of chaospod", err)
		}
		next = updated.DeepCopy()
	}
	// One status write for both: the run and Ready for the generation the
	// nextStop write made.
	conds, same := withReady(next.Status.Conditions, podReady(next, pod, stop), now)
	if next.Status.LastRun == nil || !next.Status.LastRun.Equal(&created) || !same {
		next.Status.LastRun = created.DeepCopy()
		next.Status.Conditions = conds
		if _, err := r.chaosW.UpdateStatus(ctx, next); err != nil {
			return ports.Result{}, r.writeErr(cp, "set lastRun of chaospod", err)
		}
	}
	return ports.Result{RequeueAfter: max(stop.Sub(now), 0)}, nil
}

// ceilSecond rounds t up to a whole second. spec.nextStop is stored with
// second precision (RFC 3339); requeueing for the unrounded time would stop
// every Pod up to a second after the nextStop users see, and rounding down
// would shorten its life below the interval.
func ceilSecond(t time.Time) time.Time {
	if r := t.Truncate(time.Second); !r.Equal(t) {
		return r.Add(time.Second)
	}
	return t
}

// PodLabel names, on every Pod the operator creates, the ChaosPod it
// belongs to. The admission policies of config/policy select the
// operator's Pods by it and check each against that ChaosPod's template.
const PodLabel = chaosv1.GroupName + "/chaospod"

// PodFor is the Pod a ChaosPod runs: its name and namespace, the template's
// labels (plus [PodLabel] = the ChaosPod's name, over any template label of
// that key), annotations and spec, and a controller owner reference so
// that garbage collection deletes the Pod with the ChaosPod.
func PodFor(cp *chaosv1.ChaosPod) *corev1.Pod {
	t := cp.Spec.Template.DeepCopy()
	if t.Labels == nil {
		t.Labels = map[string]string{}
	}
	t.Labels[PodLabel] = cp.Name
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:        cp.Name,
			Namespace:   cp.Namespace,
			Labels:      t.Labels,
			Annotations: t.Annotations,
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion:         chaosv1.SchemeGroupVersion.String(),
				Kind:               chaosv1.Kind,
				Name:               cp.Name,
				UID:                cp.UID,
				Controller:         new(true),
				BlockOwnerDeletion: new(true),
			}},
		},
		Spec: t.Spec,
	}
}
