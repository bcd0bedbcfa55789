package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/hexagonal-operator/operator/test/controlplane"
)

// scale: N ReplicaSets, each controlling one Pod (K with a size spelled
// NxK), all there before the operator starts, at each size of --scale-n:
// how start-up, convergence and memory grow with the cluster. There is no
// kube-controller-manager, so the Pods are created here with controller
// owner references, as the ReplicaSet controller would; they pass the
// operator's Pod webhooks, which a first process of the --operator binary
// (chaospod controller only) serves while they are created, whichever
// binary is measured, so every binary meets the same objects.
//
// The objects of a size are created once, on a control plane of their
// own, which is then stopped (seedScale); every turn restores its etcd
// data into a fresh control plane, twice: once to send the ceiling's
// writes to the seeded ReplicaSets, once for the binary's turn. So each
// turn meets the very same objects on an API server in the same state,
// none of them pays for an earlier turn's history, and nothing is deleted
// one object at a time. create is how long the creates took (the seeding
// process's start not included), the same for every turn of a size; list
// is one metadata-only list of the ReplicaSets and one of the Pods, before
// the operator starts, after one untimed list of each has loaded the
// restored API server's watch cache as the creates would have: the API
// server's least time before any cache of them is ready. ready is process
// start to /readyz 200, labeled process start to the last label seen
// (every ReplicaSet is then listed and checked, and all N Labeled Events
// awaited), written until the last Labeled Event was seen too.
// ceiling-labels is the N label PATCHes alone sent straight to the API
// server, ceiling the N PATCHes and N Labeled Events as rs-backlog sends
// them, each on a control plane restored for it; labeled-ratio = labeled /
// ceiling-labels, ratio = written / ceiling. rss (with rss-anon and
// rss-file), heap and the heap's split (heap-cache, heap-queue,
// heap-events, heap-other) are read as the memory workload reads them,
// once settled; per-object is heap / (N + pods), the cached ReplicaSets
// and Pods together. cached-rs and cached-pods are what the settled
// process's informers hold, checked as the memory workload checks them
// (all N and pods at least, no more than the cluster has). op-cpu and
// cp-cpu are from process start until written.
func runScale(ctx context.Context, e *env, bin, label string, size scaleSize) (result, error) {
	const patchConcurrency = 32
	seed, err := e.seedScale(ctx, scaleSize{replicaSets: e.opts.n(size.replicaSets), podsPer: size.podsPer})
	if err != nil {
		return nil, err
	}
	// Each ceiling gets a control plane of its own: a label PATCH on a
	// ReplicaSet the other already labeled would change nothing.
	var c scaleCeilings
	if err := e.restored(ctx, seed, func(e *env) (err error) {
		c.labels, err = e.sendLabels(ctx, seed.ns, seed.replicaSets, patchConcurrency)
		return err
	}); err != nil {
		return nil, fmt.Errorf("label ceiling: %w", err)
	}
	if err := e.restored(ctx, seed, func(e *env) (err error) {
		c.writes, err = e.sendWrites(ctx, seed.ns, seed.replicaSets, patchConcurrency)
		return err
	}); err != nil {
		return nil, fmt.Errorf("ceiling: %w", err)
	}
	var r result
	err = e.restored(ctx, seed, func(e *env) (err error) {
		r, err = e.scaleTurn(ctx, bin, label, seed, c)
		return err
	})
	return r, err
}

// scaleCeilings are the times of the writes a size asks for, sent straight
// to the API server: the label PATCHes alone (the ceiling of labeled), and
// the PATCHes with their Events (the ceiling of written).
type scaleCeilings struct{ labels, writes time.Duration }

// scaleTurn measures bin against the seeded objects, on a control plane
// restored from them.
func (e *env) scaleTurn(ctx context.Context, bin, label string, seed scaleSeed, ceiling scaleCeilings) (_ result, err error) {
	ns, n, pods := seed.ns, seed.replicaSets, seed.pods()
	// The restored API server fills its watch cache from etcd; the creates
	// would have left it full, so the timed list comes second.
	if _, err := e.listMetadata(ctx, ns, n, pods); err != nil {
		return nil, err
	}
	listed, err := e.listMetadata(ctx, ns, n, pods)
	if err != nil {
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
	op, err := e.startOperator(bin, "scale", "replicaset")
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, op.stop()) }()
	cpu, err := e.meterCPU(op)
	if err != nil {
		return nil, err
	}
	ready, err := op.waitReady(ctx)
	if err != nil {
		return nil, err
	}
	at, err := lw.wait(ctx, op.alive, e.opts.timeout)
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
	if err := e.verifyLabeled(ctx, ns, n); err != nil {
		return nil, err
	}
	events, err := e.waitLabeledEvents(ctx, ns, n)
	if err != nil {
		return nil, err
	}
	rss, heap, err := op.settledMemory(ctx)
	if err != nil {
		return nil, err
	}
	cached, err := e.verifyCached(ctx, op, binaryName(bin, label), map[string]int{"ReplicaSet": n, "Pod": pods})
	if err != nil {
		return nil, err
	}
	heapParts, err := heapFigures(ctx, op.pprof, fmt.Sprintf("scale %d %s", n, binaryName(bin, label)))
	if err != nil {
		return nil, err
	}
	labeled := at.Sub(op.started)
	written := max(labeled, writtenAt.Sub(op.started))
	return append(result{
		paramOf("n", n),
		paramOf("pods", pods),
		durationOf("create", seed.created),
		durationOf("list", listed),
		durationOf("ready", ready),
		durationOf("labeled", labeled),
		durationOf("written", written),
		durationOf("ceiling-labels", ceiling.labels),
		durationOf("ceiling", ceiling.writes),
		ratioOf("labeled-ratio", labeled.Seconds()/ceiling.labels.Seconds()),
		ratioOf("ratio", written.Seconds()/ceiling.writes.Seconds()),
		countOf("events", events),
		bytesOf("rss", rss.total),
		bytesOf("rss-anon", rss.anon),
		bytesOf("rss-file", rss.file),
		bytesOf("heap", heap),
		sizeOf("per-object", float64(heap)/float64(n+pods)),
		countOf("cached-rs", cached["ReplicaSet"]),
		countOf("cached-pods", cached["Pod"]),
	}, append(heapParts, spent...)...), nil
}

// scaleSeed is one size's objects, created once: the etcd data folder of
// the stopped control plane that holds them, and their namespace.
type scaleSeed struct {
	scaleSize
	data    string
	ns      string
	created time.Duration // the creates, for the record
}

func (s scaleSeed) pods() int { return s.replicaSets * s.podsPer }

// seedScale returns the objects of size, creating them on the first call:
// on a control plane of their own with the CRD and webhook configurations
// installed, stopped once they are all there, its folder kept in e's work
// folder for restored to copy.
func (e *env) seedScale(ctx context.Context, size scaleSize) (_ scaleSeed, err error) {
	if seed, ok := e.seeds[size]; ok {
		return seed, nil
	}
	const createConcurrency = 64
	cp, err := controlplane.Start(ctx, controlplane.Options{Dir: filepath.Join(e.dir, fmt.Sprintf("scale-%dx%d", size.replicaSets, size.podsPer))})
	if err != nil {
		return scaleSeed{}, err
	}
	defer func() {
		if err != nil {
			_ = cp.Stop() // the creates' error is the one to report
		}
	}()
	se, err := e.on(cp)
	if err != nil {
		return scaleSeed{}, err
	}
	if err := se.install(ctx); err != nil {
		return scaleSeed{}, err
	}
	seed := scaleSeed{scaleSize: size, data: cp.EtcdDataDir()}
	if seed.ns, err = se.namespace(ctx, "scale", ""); err != nil {
		return scaleSeed{}, err
	}
	began := time.Now()
	owners, err := se.createReplicaSets(ctx, seed.ns, size.replicaSets, createConcurrency)
	if err != nil {
		return scaleSeed{}, err
	}
	rsCreated := time.Since(began)
	logf("scale: %d ReplicaSets created in %s", size.replicaSets, rsCreated.Round(100*time.Millisecond))
	podsCreated, err := se.seedPods(ctx, e.opts.operator, "scale", seed.ns, owners, seed.pods(), createConcurrency)
	if err != nil {
		return scaleSeed{}, err
	}
	seed.created = rsCreated + podsCreated
	if err := cp.Stop(); err != nil {
		return scaleSeed{}, fmt.Errorf("stop the seeding control plane: %w", err)
	}
	e.seeds[size] = seed
	return seed, nil
}

// restored runs f against a fresh control plane whose etcd starts from a
// copy of seed's data, and stops it after.
func (e *env) restored(ctx context.Context, seed scaleSeed, f func(*env) error) (err error) {
	began := time.Now()
	cp, err := controlplane.Start(ctx, controlplane.Options{EtcdDataFrom: seed.data})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, cp.Stop()) }()
	logf("scale: control plane restored in %s", time.Since(began).Round(100*time.Millisecond))
	re, err := e.on(cp)
	if err != nil {
		return err
	}
	return f(re)
}

// scaleSize is one point of the scale workload: replicaSets ReplicaSets,
// each controlling podsPer Pods.
type scaleSize struct{ replicaSets, podsPer int }

// parseScaleSize reads N (one Pod each) or NxK.
func parseScaleSize(v string) (scaleSize, error) {
	n, k, perSet := strings.Cut(v, "x")
	size := scaleSize{podsPer: 1}
	var err error
	if size.replicaSets, err = strconv.Atoi(n); err != nil || size.replicaSets < 1 {
		return size, fmt.Errorf("%q is not a positive count", v)
	}
	if perSet {
		if size.podsPer, err = strconv.Atoi(k); err != nil || size.podsPer < 1 {
			return size, fmt.Errorf("%q is not a positive count of Pods per ReplicaSet", v)
		}
	}
	return size, nil
}

// scaleSeriesOf turns one binary's scale results into plot points.
func scaleSeriesOf(name string, results []result) scaleSeries {
	s := scaleSeries{name: name, ceiling: "label PATCHes alone"}
	for _, r := range results {
		s.points = append(s.points, scalePoint{
			objects: r.value("n") + r.value("pods"),
			labeled: r.value("labeled"),
			ceiling: r.value("ceiling-labels"),
			rss:     r.value("rss"),
			heap:    r.value("heap"),
			podsPer: int(r.value("pods") / r.value("n")),
		})
	}
	return s
}

// value is the named figure of r; 0 when r has none.
func (r result) value(name string) float64 {
	for _, f := range r {
		if f.name == name {
			return f.value
		}
	}
	return 0
}

// verifyLabeled lists every ReplicaSet of ns and fails unless all n carry
// the label: the watch counted labels it saw, this checks what is stored.
func (e *env) verifyLabeled(ctx context.Context, ns string, n int) error {
	names, err := e.replicaSetLabels(ctx, ns)
	if err != nil {
		return err
	}
	missing := 0
	for _, ok := range names {
		if !ok {
			missing++
		}
	}
	if len(names) != n || missing > 0 {
		return fmt.Errorf("%s holds %d ReplicaSets, %d of them without %s=%s; want %d, all labeled", ns, len(names), missing, labelKey, labelValue, n)
	}
	return nil
}

// listMetadata times one metadata-only list of the n ReplicaSets and one
// of the pods Pods of ns, one after the other, as an informer's first list
// asks for them: the least the API server needs before any cache of them
// can be ready.
func (e *env) listMetadata(ctx context.Context, ns string, n, pods int) (time.Duration, error) {
	began := time.Now()
	for _, l := range []struct {
		resource schema.GroupVersionResource
		want     int
	}{
		{appsv1.SchemeGroupVersion.WithResource("replicasets"), n},
		{corev1.SchemeGroupVersion.WithResource("pods"), pods},
	} {
		list, err := e.meta.Resource(l.resource).Namespace(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return 0, fmt.Errorf("list %s in %s: %w", l.resource.Resource, ns, err)
		}
		if len(list.Items) != l.want {
			return 0, fmt.Errorf("%s lists %d %s, want %d", ns, len(list.Items), l.resource.Resource, l.want)
		}
	}
	return time.Since(began), nil
}
