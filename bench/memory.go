package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// memorySettle is how long the operator idles after converging before its
// memory is read, so the figure is the steady state and not the peak of
// the initial list.
const memorySettle = 10 * time.Second

// gcWait bounds the wait for the operator's next garbage collection after
// settling: the Go runtime forces one two minutes after the last.
const gcWait = 150 * time.Second

// memory: the operator's footprint with ReplicaSets and the Pods they own
// in its caches. There is no kube-controller-manager, so the Pods are
// created here with controller owner references, as the ReplicaSet
// controller would. They pass the operator's own Pod webhooks on the way
// in, so a first operator process (chaospod controller only, so no label
// is written yet) serves those while they are created; the measured
// process starts afterwards and finds them all there. ready is its
// process start to /readyz 200, labeled its start to the last label seen,
// rss its resident set (VmRSS) once settled.
func runMemory(ctx context.Context, e *env, bin, label string) (_ result, err error) {
	const concurrency = 32
	nRS, nPods := e.opts.n(1000), e.opts.n(5000)
	ns, cleanup, err := e.scratch(ctx, "memory", label)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, cleanup()) }()

	owners, err := e.createReplicaSets(ctx, ns, nRS, concurrency)
	if err != nil {
		return nil, err
	}
	if _, err := e.seedPods(ctx, bin, "memory", ns, owners, nPods, concurrency); err != nil {
		return nil, err
	}

	lw, err := e.watchLabels(ctx, ns, nRS)
	if err != nil {
		return nil, err
	}
	op, err := e.startOperator(bin, "memory", "replicaset")
	if err != nil {
		lw.stop()
		return nil, err
	}
	defer func() { err = errors.Join(err, op.stop()) }()
	ready, err := op.waitReady(ctx)
	if err != nil {
		lw.stop()
		return nil, err
	}
	at, err := lw.wait(ctx, op, e.opts.timeout)
	if err != nil {
		return nil, err
	}
	rss, heap, err := op.settledMemory(ctx)
	if err != nil {
		return nil, err
	}
	return result{
		paramOf("rs", nRS),
		paramOf("pods", nPods),
		durationOf("ready", ready),
		durationOf("labeled", at.Sub(op.started)),
		bytesOf("rss", rss),
		bytesOf("heap", heap),
	}, nil
}

// settledMemory idles memorySettle, waits for the operator's next garbage
// collection and reads its RSS and heap in use right after it: the heap is
// then what the process keeps, not also the garbage it had yet to collect,
// which depends on when its last cycle happened to run.
func (op *operator) settledMemory(ctx context.Context) (rss, heap int64, err error) {
	select {
	case <-time.After(memorySettle):
	case <-ctx.Done():
		return 0, 0, ctx.Err()
	}
	settled := time.Now()
	for {
		last, err := op.metric(ctx, "go_memstats_last_gc_time_seconds")
		if err != nil {
			return 0, 0, err
		}
		if last >= float64(settled.UnixNano())/1e9 {
			break
		}
		if time.Since(settled) > gcWait {
			return 0, 0, fmt.Errorf("operator ran no garbage collection within %s of settling", gcWait)
		}
		select {
		case <-time.After(500 * time.Millisecond):
		case <-ctx.Done():
			return 0, 0, ctx.Err()
		}
	}
	if err := op.alive(); err != nil {
		return 0, 0, err
	}
	if rss, err = op.rss(); err != nil {
		return 0, 0, err
	}
	h, err := op.metric(ctx, "go_memstats_heap_inuse_bytes")
	return rss, int64(h), err
}

// seedPods creates n Pods spread over owners while an operator process
// answers the Pod webhooks, then stops that process, and returns how long
// the creates took. workload names the process's log and the progress
// line.
func (e *env) seedPods(ctx context.Context, bin, workload, ns string, owners []*appsv1.ReplicaSet, n, concurrency int) (_ time.Duration, err error) {
	op, err := e.startOperator(bin, workload+"-seed", "chaospod")
	if err != nil {
		return 0, err
	}
	defer func() { err = errors.Join(err, op.stop()) }()
	if _, err := op.waitReady(ctx); err != nil {
		return 0, err
	}
	began := time.Now()
	err = parallel(ctx, n, concurrency, func(ctx context.Context, i int) error {
		owner := owners[i%len(owners)]
		pod := ownedPod(owner, fmt.Sprintf("%s-%05d", owner.Name, i))
		if _, err := e.cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create pod %s/%s: %w", ns, pod.Name, err)
		}
		return nil
	})
	took := time.Since(began)
	logf("%s: %d pods created in %s", workload, n, took.Round(100*time.Millisecond))
	return took, err
}

// ownedPod is a Pod of rs as the ReplicaSet controller would create it:
// the template's labels and spec, rs as controlling owner.
func ownedPod(rs *appsv1.ReplicaSet, name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: rs.Namespace,
			Name:      name,
			Labels:    rs.Spec.Template.Labels,
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion:         appsv1.SchemeGroupVersion.String(),
				Kind:               "ReplicaSet",
				Name:               rs.Name,
				UID:                rs.UID,
				Controller:         new(true),
				BlockOwnerDeletion: new(true),
			}},
		},
		Spec: rs.Spec.Template.Spec,
	}
}
