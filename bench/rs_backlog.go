package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// rs-backlog: ReplicaSets that exist before the operator starts, as after
// an upgrade or a failover. converge is from process start (so it includes
// start-up and the initial list) until a watch has seen the last label;
// ceiling is the same number of label PATCHes sent straight to the API
// server at the same concurrency, the best any controller could do.
// op-cpu and cp-cpu are the CPU the operator and the control plane spent
// until converged.
func runRSBacklog(ctx context.Context, e *env, bin, label string) (_ result, err error) {
	const concurrency = 32
	n := e.opts.n(2000)
	ns, cleanup, err := e.scratch(ctx, "rs-backlog", label)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, cleanup()) }()

	ceiling, err := e.patchCeiling(ctx, label, n, concurrency)
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
	op, err := e.startOperator(bin, "rs-backlog", "replicaset")
	if err != nil {
		lw.stop()
		return nil, err
	}
	defer func() { err = errors.Join(err, op.stop()) }()
	cpu, err := e.meterCPU(op)
	if err != nil {
		lw.stop()
		return nil, err
	}
	at, err := lw.wait(ctx, op, e.opts.timeout)
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
	converge := at.Sub(op.started)
	return append(result{
		paramOf("n", n),
		durationOf("converge", converge),
		durationOf("ceiling", ceiling),
		ratioOf("ratio", converge.Seconds()/ceiling.Seconds()),
		countOf("events", events),
	}, spent...), nil
}

// patchCeiling creates n fresh ReplicaSets in a namespace of their own and
// times n merge PATCHes of the label on them from the unthrottled client.
// The namespace is gone again before the operator starts, so the operator
// never sees these.
func (e *env) patchCeiling(ctx context.Context, label string, n, concurrency int) (_ time.Duration, err error) {
	ns, cleanup, err := e.scratch(ctx, "rs-ceiling", label)
	if err != nil {
		return 0, err
	}
	defer func() { err = errors.Join(err, cleanup()) }()
	if _, err := e.createReplicaSets(ctx, ns, n, concurrency); err != nil {
		return 0, err
	}
	patch := []byte(fmt.Sprintf(`{"metadata":{"labels":{%q:%q}}}`, labelKey, labelValue))
	began := time.Now()
	err = parallel(ctx, n, concurrency, func(ctx context.Context, i int) error {
		_, err := e.cs.AppsV1().ReplicaSets(ns).Patch(ctx, rsName(i), types.MergePatchType, patch, metav1.PatchOptions{})
		if err != nil {
			return fmt.Errorf("patch replicaset %s/%s: %w", ns, rsName(i), err)
		}
		return nil
	})
	return time.Since(began), err
}
