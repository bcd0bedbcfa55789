package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
)

// labelKey and labelValue are what the replicaset controller writes.
const labelKey, labelValue = "hello", "world"

// parallel runs fn(0..n-1) on c goroutines and returns the first error;
// the others stop taking work once one has failed or ctx ends.
func parallel(ctx context.Context, n, c int, fn func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range c {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n || ctx.Err() != nil {
					return
				}
				if err := fn(ctx, i); err != nil {
					cancel(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err := context.Cause(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return ctx.Err()
}

func rsName(i int) string { return fmt.Sprintf("rs-%05d", i) }

// replicaSet is a valid ReplicaSet with zero replicas: the API server
// accepts it, and without kube-controller-manager nothing acts on it but
// the operator.
func replicaSet(namespace, name string) *appsv1.ReplicaSet {
	selector := map[string]string{"app": name}
	return &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: map[string]string{"team": "bench"}},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: new(int32),
			Selector: &metav1.LabelSelector{MatchLabels: selector},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: selector},
				Spec:       podSpec(),
			},
		},
	}
}

func podSpec() corev1.PodSpec {
	return corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}}}
}

// createReplicaSets creates n ReplicaSets in ns at concurrency c and
// returns them as created (with their UIDs).
func (e *env) createReplicaSets(ctx context.Context, ns string, n, c int) ([]*appsv1.ReplicaSet, error) {
	out := make([]*appsv1.ReplicaSet, n)
	err := parallel(ctx, n, c, func(ctx context.Context, i int) error {
		rs, err := e.cs.AppsV1().ReplicaSets(ns).Create(ctx, replicaSet(ns, rsName(i)), metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("create replicaset %s/%s: %w", ns, rsName(i), err)
		}
		out[i] = rs
		return nil
	})
	return out, err
}

// watchFrom streams events of lw from resourceVersion rv on, re-opening
// the watch where it left off when the API server closes it; a chaos run
// lasts longer than one watch may.
func watchFrom(ctx context.Context, rv string, watchFn cache.WatchFuncWithContext) (watch.Interface, error) {
	w, err := watchtools.NewRetryWatcherWithContext(ctx, rv, &cache.ListWatch{WatchFuncWithContext: watchFn})
	if err != nil {
		return nil, fmt.Errorf("open watch: %w", err)
	}
	return w, nil
}

// labelWatch counts distinct objects of a namespace that reached a state
// (a ReplicaSet labeled hello=world, a ReplicaSet's Labeled Event written)
// and notes when want of them had. It watches rather than lists: polling
// thousands of objects would load the API server it measures.
type labelWatch struct {
	what    string // what is counted, for errors
	want    int
	done    chan struct{}
	at      time.Time // when the last missing one was seen; valid after done
	labeled atomic.Int64
	err     error
	stop    func()
}

// watchLabels counts the ReplicaSets of ns that carry hello=world.
func (e *env) watchLabels(ctx context.Context, ns string, want int) (*labelWatch, error) {
	rsClient := e.cs.AppsV1().ReplicaSets(ns)
	return watchCount(ctx, "replicasets labeled in "+ns, want,
		func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return rsClient.List(ctx, o) },
		rsClient.Watch,
		func(obj runtime.Object) (string, bool) {
			if rs, ok := obj.(*appsv1.ReplicaSet); ok && rs.Labels[labelKey] == labelValue {
				return rs.Name, true
			}
			return "", false
		})
}

// watchLabeledEvents counts the ReplicaSets of ns that have their Labeled
// Event.
func (e *env) watchLabeledEvents(ctx context.Context, ns string, want int) (*labelWatch, error) {
	evClient := e.cs.EventsV1().Events(ns)
	return watchCount(ctx, "labeled events in "+ns, want,
		func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return evClient.List(ctx, o) },
		evClient.Watch,
		func(obj runtime.Object) (string, bool) {
			if ev, ok := obj.(*eventsv1.Event); ok && ev.Reason == reasonLabeled && ev.Regarding.Kind == "ReplicaSet" {
				return ev.Regarding.Name, true
			}
			return "", false
		})
}

// watchCount lists once with list (counting what matches already, a page
// at a time) and watches from that list's resourceVersion, so no change
// is missed; match names the object a change is about and whether it
// counts.
func watchCount(ctx context.Context, what string, want int,
	list func(context.Context, metav1.ListOptions) (runtime.Object, error),
	watchFn cache.WatchFuncWithContext,
	match func(runtime.Object) (string, bool),
) (*labelWatch, error) {
	ctx, cancel := context.WithCancel(ctx)
	seen := map[string]bool{}
	opts := metav1.ListOptions{Limit: listPage}
	var rv string
	for {
		page, err := list(ctx, opts)
		if err != nil {
			cancel()
			return nil, fmt.Errorf("list %s: %w", what, err)
		}
		items, err := meta.ExtractList(page)
		if err != nil {
			cancel()
			return nil, err
		}
		for _, item := range items {
			if name, ok := match(item); ok {
				seen[name] = true
			}
		}
		paged, err := meta.ListAccessor(page)
		if err != nil {
			cancel()
			return nil, err
		}
		if rv, opts.Continue = paged.GetResourceVersion(), paged.GetContinue(); opts.Continue == "" {
			break
		}
	}
	w, err := watchFrom(ctx, rv, watchFn)
	if err != nil {
		cancel()
		return nil, err
	}
	lw := &labelWatch{what: what, want: want, done: make(chan struct{}), stop: sync.OnceFunc(func() { cancel(); w.Stop() })}
	lw.labeled.Store(int64(len(seen)))
	go func() {
		defer close(lw.done)
		if len(seen) >= want {
			lw.at = time.Now()
			return
		}
		for ev := range w.ResultChan() {
			switch ev.Type {
			case watch.Error:
				lw.err = fmt.Errorf("watch %s: %v", what, ev.Object)
				return
			case watch.Added, watch.Modified:
				name, ok := match(ev.Object)
				if !ok || seen[name] {
					continue
				}
				seen[name] = true
				lw.labeled.Store(int64(len(seen)))
				if len(seen) >= want {
					lw.at = time.Now()
					return
				}
			}
		}
		lw.err = fmt.Errorf("watch %s ended: %w", what, ctx.Err())
	}()
	return lw, nil
}

// wait returns when want objects have been counted, and fails when alive
// does (checked each second: the process doing the writes has exited),
// ctx ends or timeout passes first.
func (lw *labelWatch) wait(ctx context.Context, alive func() error, timeout time.Duration) (time.Time, error) {
	defer lw.stop()
	deadline := time.After(timeout)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-lw.done:
			return lw.at, lw.err
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		case <-deadline:
			return time.Time{}, fmt.Errorf("only %d of %d %s after %s", lw.labeled.Load(), lw.want, lw.what, timeout)
		case <-tick.C:
			if err := alive(); err != nil {
				return time.Time{}, err
			}
		}
	}
}
