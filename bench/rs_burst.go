package main

import (
	"context"
	"errors"
	"time"
)

// rs-burst: the operator is running and ready when ReplicaSets arrive at
// once, as when a deployment tool applies a large change. converge is from
// the first create until a watch has seen the last label, so it overlaps
// the creates (creates says how long they took beside the operator).
// ceiling is the same creates timed in the same run with no operator
// running (in a namespace of their own, gone before the operator starts):
// no controller converges before the last create, so converge/ceiling
// says how far past that the operator ends. op-cpu and cp-cpu are the CPU
// the operator and the control plane spent meanwhile, the creates' share
// included.
func runRSBurst(ctx context.Context, e *env, bin, label string) (_ result, err error) {
	const concurrency = 16
	n := e.opts.n(1000)
	ns, cleanup, err := e.scratch(ctx, "rs-burst", label)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, cleanup()) }()

	ceiling, err := e.createCeiling(ctx, label, n, concurrency)
	if err != nil {
		return nil, err
	}
	op, err := e.startOperator(bin, "rs-burst", "replicaset")
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, op.stop()) }()
	if _, err := op.waitReady(ctx); err != nil {
		return nil, err
	}
	lw, err := e.watchLabels(ctx, ns, n)
	if err != nil {
		return nil, err
	}
	cpu, err := e.meterCPU(op)
	if err != nil {
		lw.stop()
		return nil, err
	}
	first := time.Now()
	if _, err := e.createReplicaSets(ctx, ns, n, concurrency); err != nil {
		lw.stop()
		return nil, err
	}
	creates := time.Since(first)
	at, err := lw.wait(ctx, op.alive, e.opts.timeout)
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
	return append(result{
		paramOf("n", n),
		durationOf("converge", at.Sub(first)),
		durationOf("creates", creates),
		durationOf("ceiling", ceiling),
		ratioOf("converge/ceiling", at.Sub(first).Seconds()/ceiling.Seconds()),
		countOf("events", events),
	}, spent...), nil
}

// createCeiling times n ReplicaSet creates at the given concurrency in a
// namespace of their own while no operator runs, and deletes the
// namespace before returning, so the operator measured next never sees
// them.
func (e *env) createCeiling(ctx context.Context, label string, n, concurrency int) (_ time.Duration, err error) {
	ns, cleanup, err := e.scratch(ctx, "rs-burst-ceiling", label)
	if err != nil {
		return 0, err
	}
	defer func() { err = errors.Join(err, cleanup()) }()
	began := time.Now()
	if _, err := e.createReplicaSets(ctx, ns, n, concurrency); err != nil {
		return 0, err
	}
	return time.Since(began), nil
}
