package controller_test

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hexagonal-operator/operator/internal/ports"
)

// BenchmarkControllerThroughput measures the loop itself: b.N distinct
// requests through the queue and 16 workers into a reconciler that does
// nothing, reported as reconciles/s.
func BenchmarkControllerThroughput(b *testing.B) {
	e := newEnv()
	e.deps.Logger = zap.NewNop() // the observer would measure itself
	src := newSource("Thing")
	var done atomic.Int64
	all := make(chan struct{})
	r := ports.ReconcilerFunc(func(context.Context, ports.Request) (ports.Result, error) {
		if done.Add(1) == int64(b.N) {
			close(all)
		}
		return ports.Result{}, nil
	})
	c, err := newController("bench", e.deps, 16, r, forSource(src))
	if err != nil {
		b.Fatal(err)
	}
	if err := c.Start(b.Context()); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := c.Stop(ctx); err != nil {
			b.Error(err)
		}
	})
	objects := make([]*metav1.ObjectMeta, b.N)
	for i := range objects {
		objects[i] = object("bench", "obj-"+strconv.Itoa(i))
	}

	b.ResetTimer()
	begin := time.Now()
	for _, o := range objects {
		src.add(o)
	}
	<-all
	elapsed := time.Since(begin)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "reconciles/s")
}
