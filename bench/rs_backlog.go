package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// rs-backlog: ReplicaSets that exist before the operator starts, as after
// an upgrade or a failover. converge is from process start (so it includes
// start-up and the initial list) until a watch has seen the last label,
// written until another has seen the last Labeled Event too. Two ceilings,
// the best any controller could do, are timed in the same run at the same
// concurrency, each on ReplicaSets of its own: ceiling-labels is the label
// PATCHes alone (see labelCeiling), ceiling the label PATCHes and the
// Labeled Events (see writeCeiling). Each time is divided by the ceiling
// of the same writes: labeled-ratio = converge / ceiling-labels, ratio =
// written / ceiling. op-cpu and cp-cpu are the CPU the operator and the
// control plane spent until written.
func runRSBacklog(ctx context.Context, e *env, bin, label string) (_ result, err error) {
	const concurrency = 32
	n := e.opts.n(2000)
	ns, cleanup, err := e.scratch(ctx, "rs-backlog", label)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, cleanup()) }()

	labelsCeiling, err := e.labelCeiling(ctx, label, n, concurrency)
	if err != nil {
		return nil, err
	}
	ceiling, err := e.writeCeiling(ctx, label, n, concurrency)
	if err != nil {
		return nil, err
	}
	if _, err := e.createReplicaSets(ctx, ns, n, concurrency); err != nil {
		return nil, err
	}
	lw, err := e.watchLabels(ctx, ns, n)
	if err != nil {
		return nil, err
	}
	defer lw.stop()
	ew, err := e.watchLabeledEvents(ctx, ns, n)
	if err != nil {
		return nil, err
	}
	defer ew.stop()
	op, err := e.startOperator(bin, "rs-backlog", "replicaset")
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, op.stop()) }()
	cpu, err := e.meterCPU(op)
	if err != nil {
		return nil, err
	}
	labeledAt, err := lw.wait(ctx, op.alive, e.opts.timeout)
	if err != nil {
		return nil, err
	}
	writtenAt, err := ew.wait(ctx, op.alive, e.opts.timeout)
	if err != nil {
		return nil, err
	}
	spent, err := cpu.figures()
	if err != nil {
		return nil, err
	}
	events, err := e.waitLabeledEvents(ctx, ns, n)
	if err != nil {
		return nil, err
	}
	converge, written := labeledAt.Sub(op.started), max(writtenAt.Sub(op.started), labeledAt.Sub(op.started))
	return append(result{
		paramOf("n", n),
		durationOf("converge", converge),
		durationOf("written", written),
		durationOf("ceiling-labels", labelsCeiling),
		durationOf("ceiling", ceiling),
		ratioOf("labeled-ratio", converge.Seconds()/labelsCeiling.Seconds()),
		ratioOf("ratio", written.Seconds()/ceiling.Seconds()),
		countOf("events", events),
	}, spent...), nil
}

// writeCeiling creates n fresh ReplicaSets in a namespace of their own,
// lists them, and times the writes the operator must make for them, sent
// straight to the API server from that list by the unthrottled client at
// the given concurrency: for each, a merge PATCH of the label, then a
// Labeled Event (events.k8s.io/v1, as the operator records it). No
// controller can converge faster than its own writes go through. The
// namespace is gone again before the operator starts, so the operator
// never sees these.
func (e *env) writeCeiling(ctx context.Context, label string, n, concurrency int) (time.Duration, error) {
	return e.ceilingOf(ctx, "rs-ceiling", label, n, concurrency, e.sendWrites)
}

// labelCeiling is writeCeiling without the Events: the label PATCHes alone
// (sendLabels), on n fresh ReplicaSets of its own, since a PATCH that
// changes nothing is no write. It is the ceiling of the time to all
// labeled, as writeCeiling is of the time to all written.
func (e *env) labelCeiling(ctx context.Context, label string, n, concurrency int) (time.Duration, error) {
	return e.ceilingOf(ctx, "rs-label-ceiling", label, n, concurrency, e.sendLabels)
}

// ceilingOf creates n ReplicaSets in a scratch namespace named after
// workload, times send on them, and deletes the namespace again.
func (e *env) ceilingOf(ctx context.Context, workload, label string, n, concurrency int,
	send func(ctx context.Context, ns string, n, concurrency int) (time.Duration, error),
) (_ time.Duration, err error) {
	ns, cleanup, err := e.scratch(ctx, workload, label)
	if err != nil {
		return 0, err
	}
	defer func() { err = errors.Join(err, cleanup()) }()
	if _, err := e.createReplicaSets(ctx, ns, n, concurrency); err != nil {
		return 0, err
	}
	return send(ctx, ns, n, concurrency)
}

// sendWrites labels the n ReplicaSets of ns and creates a Labeled Event
// for each, at the given concurrency, straight to the API server, and
// returns how long that took: the writes a controller must make, with no
// controller.
func (e *env) sendWrites(ctx context.Context, ns string, n, concurrency int) (time.Duration, error) {
	return e.send(ctx, ns, n, concurrency, true)
}

// sendLabels is sendWrites without the Events: the label PATCHes alone.
func (e *env) sendLabels(ctx context.Context, ns string, n, concurrency int) (time.Duration, error) {
	return e.send(ctx, ns, n, concurrency, false)
}

// send lists the n ReplicaSets of ns, then times a label PATCH of each
// and, with events, a Labeled Event for each after its PATCH. The time is
// taken as a run's is: until the watches a run opens (watchLabels,
// watchLabeledEvents), open here too, have seen the last write. The API
// server then serves the run's observers in both, and neither time stops
// while a write is still on its way to them.
func (e *env) send(ctx context.Context, ns string, n, concurrency int, events bool) (time.Duration, error) {
	listed, err := e.listReplicaSets(ctx, ns)
	if err != nil {
		return 0, err
	}
	if len(listed) != n {
		return 0, fmt.Errorf("%s lists %d ReplicaSets, want %d", ns, len(listed), n)
	}
	lw, err := e.watchLabels(ctx, ns, n)
	if err != nil {
		return 0, err
	}
	defer lw.stop()
	ew, err := e.watchLabeledEvents(ctx, ns, n)
	if err != nil {
		return 0, err
	}
	defer ew.stop()
	patch := []byte(fmt.Sprintf(`{"metadata":{"labels":{%q:%q}}}`, labelKey, labelValue))
	began := time.Now()
	err = parallel(ctx, n, concurrency, func(ctx context.Context, i int) error {
		rs := listed[i]
		patched, err := e.cs.AppsV1().ReplicaSets(ns).Patch(ctx, rs.Name, types.MergePatchType, patch, metav1.PatchOptions{})
		if err != nil {
			return fmt.Errorf("patch replicaset %s/%s: %w", ns, rs.Name, err)
		}
		if !events {
			return nil
		}
		if _, err := e.cs.EventsV1().Events(ns).Create(ctx, labeledEvent(patched, began), metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create event for replicaset %s/%s: %w", ns, rs.Name, err)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	seen, err := lw.wait(ctx, driverAlive, e.opts.timeout)
	if err != nil || !events {
		return seen.Sub(began), err
	}
	eventsSeen, err := ew.wait(ctx, driverAlive, e.opts.timeout)
	return max(seen.Sub(began), eventsSeen.Sub(began)), err
}

// driverAlive is the liveness of a ceiling's writer, the driver itself:
// there is no other process to outlive.
func driverAlive() error { return nil }

// labeledEvent is the Event the operator records when it labels rs.
func labeledEvent(rs metav1.Object, at time.Time) *eventsv1.Event {
	return &eventsv1.Event{
		ObjectMeta:          metav1.ObjectMeta{Namespace: rs.GetNamespace(), Name: fmt.Sprintf("%s.%x", rs.GetName(), at.UnixNano())},
		EventTime:           metav1.NewMicroTime(at),
		ReportingController: "bench/ceiling",
		ReportingInstance:   "bench",
		Action:              "Label",
		Reason:              reasonLabeled,
		Regarding: corev1.ObjectReference{
			APIVersion: "apps/v1", Kind: "ReplicaSet",
			Namespace: rs.GetNamespace(), Name: rs.GetName(), UID: rs.GetUID(), ResourceVersion: rs.GetResourceVersion(),
		},
		Note: fmt.Sprintf("Set label %s=%s", labelKey, labelValue),
		Type: corev1.EventTypeNormal,
	}
}
