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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

// labelWatch follows the ReplicaSets of a namespace and notes when want of
// them carry hello=world. It watches rather than lists: polling 2000
// objects would load the API server it measures.
type labelWatch struct {
	want    int
	done    chan struct{}
	at      time.Time // when the last missing label was seen; valid after done
	labeled atomic.Int64
	err     error
	stop    func()
}

// watchLabels lists the namespace once (counting labels already there) and
// watches from that list's resourceVersion, so no change is missed.
func (e *env) watchLabels(ctx context.Context, ns string, want int) (*labelWatch, error) {
	ctx, cancel := context.WithCancel(ctx)
	rsClient := e.cs.AppsV1().ReplicaSets(ns)
	list, err := rsClient.List(ctx, metav1.ListOptions{})
	if err != nil {
		cancel()
		return nil, fmt.Errorf("list replicasets in %s: %w", ns, err)
	}
	labeled := map[string]bool{}
	for _, rs := range list.Items {
		if rs.Labels[labelKey] == labelValue {
			labeled[rs.Name] = true
		}
	}
	w, err := watchFrom(ctx, list.ResourceVersion, func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
		return rsClient.Watch(ctx, o)
	})
	if err != nil {
		cancel()
		return nil, err
	}
	lw := &labelWatch{want: want, done: make(chan struct{}), stop: func() { cancel(); w.Stop() }}
	lw.labeled.Store(int64(len(labeled)))
	go func() {
		defer close(lw.done)
		if len(labeled) >= want {
			lw.at = time.Now()
			return
		}
		for ev := range w.ResultChan() {
			switch ev.Type {
			case watch.Error:
				lw.err = fmt.Errorf("watch replicasets in %s: %v", ns, ev.Object)
				return
			case watch.Added, watch.Modified:
				rs, ok := ev.Object.(*appsv1.ReplicaSet)
				if !ok || rs.Labels[labelKey] != labelValue || labeled[rs.Name] {
					continue
				}
				labeled[rs.Name] = true
				lw.labeled.Store(int64(len(labeled)))
				if len(labeled) >= want {
					lw.at = time.Now()
					return
				}
			}
		}
		lw.err = fmt.Errorf("watch replicasets in %s ended: %w", ns, ctx.Err())
	}()
	return lw, nil
}

// wait returns when every wanted ReplicaSet is labeled, and fails when op
// exits, ctx ends or timeout passes first.
func (lw *labelWatch) wait(ctx context.Context, op *operator, timeout time.Duration) (time.Time, error) {
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
			return time.Time{}, fmt.Errorf("only %d of %d replicasets labeled after %s", lw.labeled.Load(), lw.want, timeout)
		case <-tick.C:
			if err := op.alive(); err != nil {
				return time.Time{}, err
			}
		}
	}
}
