package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	chaosv1 "github.com/hexagonal-operator/operator/api/chaos/v1"
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
// rss its resident set (VmRSS) once settled. Then what the process caches
// is checked (see verifyCached): cached-rs and cached-pods are the
// ReplicaSets and Pods its informers hold, at least those created here
// and no more than the cluster has.
//
// With --memory-chaospods, that many v1 ChaosPods are created too, each
// living an hour, and the first process runs their Pods; the measured one
// then runs the chaospod controller beside the replicaset one, and caches
// ChaosPods (cached-chaospods) and their Pods as well.
func runMemory(ctx context.Context, e *env, bin, label string) (_ result, err error) {
	const concurrency = 32
	nRS, nPods := e.opts.n(1000), e.opts.n(5000)
	nChaos := 0
	if e.opts.memoryChaosPods > 0 {
		nChaos = e.opts.n(e.opts.memoryChaosPods)
	}
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
	controllers := "replicaset"
	if nChaos > 0 {
		if err := e.seedChaosPods(ctx, bin, ns, nChaos, concurrency/2); err != nil {
			return nil, err
		}
		controllers = "replicaset,chaospod"
	}

	lw, err := e.watchLabels(ctx, ns, nRS)
	if err != nil {
		return nil, err
	}
	op, err := e.startOperator(bin, "memory", controllers)
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
	at, err := lw.wait(ctx, op.alive, e.opts.timeout)
	if err != nil {
		return nil, err
	}
	rss, heap, err := op.settledMemory(ctx)
	if err != nil {
		return nil, err
	}
	// Every ChaosPod's Pod is a Pod too, cached with the ReplicaSets'.
	created := map[string]int{"ReplicaSet": nRS, "Pod": nPods + nChaos}
	if nChaos > 0 {
		created[chaosv1.Kind] = nChaos
	}
	cached, err := e.verifyCached(ctx, op, binaryName(bin, label), created)
	if err != nil {
		return nil, err
	}
	heapParts, err := heapFigures(ctx, op.pprof, "memory "+binaryName(bin, label))
	if err != nil {
		return nil, err
	}
	res := result{paramOf("rs", nRS), paramOf("pods", nPods)}
	if nChaos > 0 {
		res = append(res, paramOf("chaospods", nChaos))
	}
	res = append(res,
		durationOf("ready", ready),
		durationOf("labeled", at.Sub(op.started)),
		bytesOf("rss", rss.total),
		bytesOf("rss-anon", rss.anon),
		bytesOf("rss-file", rss.file),
		bytesOf("heap", heap),
		countOf("cached-rs", cached["ReplicaSet"]),
		countOf("cached-pods", cached["Pod"]),
	)
	if nChaos > 0 {
		res = append(res, countOf("cached-chaospods", cached[chaosv1.Kind]))
	}
	res = append(res, heapParts...)
	return res, nil
}

// memoryChaosLife is the life of the memory workload's ChaosPods' Pods:
// longer than any run, so that none is stopped while memory is measured.
const memoryChaosLife = time.Hour

// seedChaosPods creates n v1 ChaosPods in ns, their first stop set well
// ahead so that none falls due during the run, while an operator process
// (the chaospod controller) creates their Pods, and stops it once every
// ChaosPod has recorded its Pod.
func (e *env) seedChaosPods(ctx context.Context, bin, ns string, n, concurrency int) (err error) {
	op, err := e.startOperator(bin, "memory-chaos-seed", "chaospod")
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, op.stop()) }()
	if _, err := op.waitReady(ctx); err != nil {
		return err
	}
	began := time.Now()
	stop := metav1.NewTime(time.Now().Add(memoryChaosLife - 5*time.Minute).Truncate(time.Second))
	err = parallel(ctx, n, concurrency, func(ctx context.Context, i int) error {
		cp := &chaosv1.ChaosPod{
			TypeMeta: metav1.TypeMeta{APIVersion: chaosv1.SchemeGroupVersion.String(), Kind: chaosv1.Kind},
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("chaos-%05d", i),
				Annotations: map[string]string{chaosv1.StopIntervalAnnotation: memoryChaosLife.String()}},
			Spec: chaosv1.ChaosPodSpec{
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "chaos-bench"}}, Spec: podSpec()},
				NextStop: &stop,
			},
		}
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(cp)
		if err != nil {
			return fmt.Errorf("encode chaospod %s/%s: %w", ns, cp.Name, err)
		}
		// A webhook call the seeding process's connection limits reset
		// is the API server's error, not the ChaosPod's: create again.
		for attempt := 1; ; attempt++ {
			_, err := e.dyn.Resource(chaosv1.GroupVersionResource).Namespace(ns).Create(ctx, &unstructured.Unstructured{Object: u}, metav1.CreateOptions{})
			switch {
			case err == nil, apierrors.IsAlreadyExists(err):
				return nil
			case attempt < 5 && apierrors.IsInternalError(err) && strings.Contains(err.Error(), "failed calling webhook"):
				time.Sleep(time.Duration(attempt) * 200 * time.Millisecond)
			default:
				return fmt.Errorf("create chaospod %s/%s: %w", ns, cp.Name, err)
			}
		}
	})
	if err != nil {
		return err
	}
	deadline := time.Now().Add(e.opts.timeout)
	for {
		list, err := e.dyn.Resource(chaosv1.GroupVersionResource).Namespace(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return fmt.Errorf("list chaospods in %s: %w", ns, err)
		}
		running := 0
		for _, item := range list.Items {
			if lastRun, _, _ := unstructured.NestedString(item.Object, "status", "lastRun"); lastRun != "" {
				running++
			}
		}
		if running == n {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d of %d chaospods in %s ran their Pod within %s", running, n, ns, e.opts.timeout)
		}
		select {
		case <-time.After(500 * time.Millisecond):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	logf("memory: %d chaospods running their Pods after %s", n, time.Since(began).Round(100*time.Millisecond))
	return nil
}

// settledMemory idles memorySettle, waits for the operator's next garbage
// collection and reads its RSS and heap in use right after it: the heap is
// then what the process keeps, not also the garbage it had yet to collect,
// which depends on when its last cycle happened to run.
func (op *operator) settledMemory(ctx context.Context) (rss residentSet, heap int64, err error) {
	select {
	case <-time.After(memorySettle):
	case <-ctx.Done():
		return residentSet{}, 0, ctx.Err()
	}
	settled := time.Now()
	for {
		last, err := op.metric(ctx, "go_memstats_last_gc_time_seconds")
		if err != nil {
			return residentSet{}, 0, err
		}
		if last >= float64(settled.UnixNano())/1e9 {
			break
		}
		if time.Since(settled) > gcWait {
			return residentSet{}, 0, fmt.Errorf("operator ran no garbage collection within %s of settling", gcWait)
		}
		select {
		case <-time.After(500 * time.Millisecond):
		case <-ctx.Done():
			return residentSet{}, 0, ctx.Err()
		}
	}
	if err := op.alive(); err != nil {
		return residentSet{}, 0, err
	}
	if rss, err = op.rss(); err != nil {
		return residentSet{}, 0, err
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
	// What the webhook server gave up or refused of the API server's
	// connections says why a create failed, or how near one came to it.
	if body, serr := op.scrape(ctx); serr == nil {
		logf("%s: the seeding webhook server's connections: %s", workload, connectionCounts(body))
	}
	return took, err
}

// connectionCounts summarises the webhook server's connections reset at
// accept and given up, by reason, from its /metrics body.
func connectionCounts(body []byte) string {
	var parts []string
	for _, m := range []struct{ name, label string }{
		{"operator_webhook_connections_rejected_total", "reason"},
		{"operator_webhook_connections_evicted_total", "resource"},
	} {
		samples, err := samplesOf(body, m.name)
		if err != nil {
			return err.Error()
		}
		if len(samples) == 0 {
			return m.name + " not exported"
		}
		for _, s := range samples {
			parts = append(parts, fmt.Sprintf("%s{%s=%q}=%g", strings.TrimPrefix(m.name, "operator_webhook_"), m.label, s.labels[m.label], s.value))
		}
	}
	return strings.Join(parts, " ")
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
