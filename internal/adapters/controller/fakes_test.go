package controller_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/hexagonal-operator/operator/internal/adapters/controller"
	"github.com/hexagonal-operator/operator/internal/adapters/controller/predicate"
	"github.com/hexagonal-operator/operator/internal/ports"
)

// fakeSource delivers the events a test fires, synchronously, to every
// registered handler.
type fakeSource struct {
	kind   schema.GroupKind
	addErr error
	// gate is what WaitForSync waits for: synced unless a test says not.
	gate *fakeCacheSync

	mu       sync.Mutex
	handlers []toolscache.ResourceEventHandler
}

var _ controller.Source = (*fakeSource)(nil)

func newSource(kind string) *fakeSource {
	return &fakeSource{kind: schema.GroupKind{Kind: kind}, gate: newCacheSync(true)}
}

func (s *fakeSource) GroupKind() schema.GroupKind { return s.kind }

func (s *fakeSource) WaitForSync(ctx context.Context) error { return s.gate.WaitForSync(ctx) }

func (s *fakeSource) HasApplied(string) bool { return true }

func (s *fakeSource) AddEventHandler(h toolscache.ResourceEventHandler) error {
	if s.addErr != nil {
		return s.addErr
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.handlers = append(s.handlers, h)
	return nil
}

func (s *fakeSource) registered() []toolscache.ResourceEventHandler {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.handlers)
}

func (s *fakeSource) add(obj metav1.Object) {
	for _, h := range s.registered() {
		h.OnAdd(obj, false)
	}
}

func (s *fakeSource) update(oldObj, newObj metav1.Object) {
	for _, h := range s.registered() {
		h.OnUpdate(oldObj, newObj)
	}
}

// fakeCacheSync is a source's sync gate: it syncs when the test says so.
type fakeCacheSync struct {
	synced  chan struct{}
	once    sync.Once
	waiting chan struct{} // closed once WaitForSync was called
	wOnce   sync.Once
}

func newCacheSync(synced bool) *fakeCacheSync {
	s := &fakeCacheSync{synced: make(chan struct{}), waiting: make(chan struct{})}
	if synced {
		s.sync()
	}
	return s
}

func (s *fakeCacheSync) sync() { s.once.Do(func() { close(s.synced) }) }

func (s *fakeCacheSync) HasSynced() bool {
	select {
	case <-s.synced:
		return true
	default:
		return false
	}
}

func (s *fakeCacheSync) WaitForSync(ctx context.Context) error {
	s.wOnce.Do(func() { close(s.waiting) })
	select {
	case <-s.synced:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// fakeLeader is elected when the test says so.
type fakeLeader struct {
	elected chan struct{}
	once    sync.Once
	asked   chan struct{} // closed once Elected was called
	aOnce   sync.Once
}

var _ controller.LeaderElector = (*fakeLeader)(nil)

func newLeader(elected bool) *fakeLeader {
	l := &fakeLeader{elected: make(chan struct{}), asked: make(chan struct{})}
	if elected {
		l.elect()
	}
	return l
}

func (l *fakeLeader) elect() { l.once.Do(func() { close(l.elected) }) }

func (l *fakeLeader) isElected() bool {
	select {
	case <-l.elected:
		return true
	default:
		return false
	}
}

func (l *fakeLeader) Elected() <-chan struct{} {
	l.aOnce.Do(func() { close(l.asked) })
	return l.elected
}

// env is what one test's controller runs against.
type env struct {
	reg    *prometheus.Registry
	logs   *observer.ObservedLogs
	sync   *fakeCacheSync
	leader *fakeLeader
	deps   controller.Deps
}

func newEnv() *env {
	core, logs := observer.New(zapcore.DebugLevel)
	e := &env{
		reg:    prometheus.NewPedanticRegistry(),
		logs:   logs,
		sync:   newCacheSync(true),
		leader: newLeader(true),
	}
	e.deps = controller.Deps{
		Logger:        zap.New(core),
		Registerer:    e.reg,
		LeaderElector: e.leader,
	}
	return e
}

// metric reads one series from g: a counter's or gauge's value, a
// histogram's sample count. labels are name/value pairs. A series that does
// not exist fails the test.
func metric(t testing.TB, g prometheus.Gatherer, name string, labels ...string) float64 {
	t.Helper()
	v, ok := lookup(t, g, name, labels...)
	require.True(t, ok, "no series %s%v", name, labels)
	return v
}

func lookup(t testing.TB, g prometheus.Gatherer, name string, labels ...string) (float64, bool) {
	t.Helper()
	families, err := g.Gather()
	require.NoError(t, err)
	want := map[string]string{}
	for i := 0; i+1 < len(labels); i += 2 {
		want[labels[i]] = labels[i+1]
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if !labelsMatch(m, want) {
				continue
			}
			switch {
			case m.Counter != nil:
				return m.Counter.GetValue(), true
			case m.Gauge != nil:
				return m.Gauge.GetValue(), true
			case m.Histogram != nil:
				return float64(m.Histogram.GetSampleCount()), true
			}
		}
	}
	return 0, false
}

func labelsMatch(m *dto.Metric, want map[string]string) bool {
	got := map[string]string{}
	for _, l := range m.GetLabel() {
		got[l.GetName()] = l.GetValue()
	}
	for k, v := range want {
		if got[k] != v {
			return false
		}
	}
	return len(got) == len(want)
}

// recorder is a reconciler that counts calls per request and delegates the
// answer to fn (n is the 1-based call number for that request).
type recorder struct {
	fn func(ctx context.Context, req ports.Request, n int) (ports.Result, error)

	mu    sync.Mutex
	calls map[ports.Request]int
}

func newRecorder(fn func(ctx context.Context, req ports.Request, n int) (ports.Result, error)) *recorder {
	if fn == nil {
		fn = func(context.Context, ports.Request, int) (ports.Result, error) { return ports.Result{}, nil }
	}
	return &recorder{fn: fn, calls: map[ports.Request]int{}}
}

func (r *recorder) Reconcile(ctx context.Context, req ports.Request) (ports.Result, error) {
	r.mu.Lock()
	r.calls[req]++
	n := r.calls[req]
	r.mu.Unlock()
	return r.fn(ctx, req, n)
}

func (r *recorder) count(req ports.Request) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls[req]
}

func (r *recorder) total() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, c := range r.calls {
		n += c
	}
	return n
}

func (r *recorder) requests() []ports.Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	var reqs []ports.Request
	for req := range r.calls {
		reqs = append(reqs, req)
	}
	slices.SortFunc(reqs, func(a, b ports.Request) int {
		return strings.Compare(a.String(), b.String())
	})
	return reqs
}

func req(ns, name string) ports.Request {
	return ports.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}}
}

func object(ns, name string) *metav1.ObjectMeta {
	return &metav1.ObjectMeta{Namespace: ns, Name: name}
}

// build makes a controller that reconciles src's objects with r.
func build(t testing.TB, e *env, name string, src controller.Source, workers int, opts controller.Options, r ports.Reconciler) *controller.Controller {
	t.Helper()
	d := e.deps
	d.Options = opts
	c, err := newController(name, d, workers, r, forSource(src))
	require.NoError(t, err)
	return c
}

func newController(name string, d controller.Deps, workers int, r ports.Reconciler, watches ...controller.Watch) (*controller.Controller, error) {
	return controller.New(controller.Config{Name: name, Workers: workers, Watches: watches, Reconciler: r}, d)
}

// forSource watches src's objects themselves.
func forSource(src controller.Source, predicates ...predicate.Predicate) controller.Watch {
	return controller.Watch{Source: src, Map: controller.EnqueueObject, Predicates: predicates}
}

// ownedBy watches src's objects for their controllers of kind owner.
func ownedBy(src controller.Source, owner schema.GroupKind) controller.Watch {
	return controller.Watch{Source: src, Map: controller.EnqueueOwner(owner)}
}

// start starts c and stops it when the test ends, failing the test if the
// stop does not complete.
func start(t testing.TB, c *controller.Controller) {
	t.Helper()
	require.NoError(t, c.Start(t.Context()))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, c.Stop(ctx))
	})
}

var errBoom = errors.New("boom")

const (
	waitFor = 10 * time.Second
	tick    = 2 * time.Millisecond
)

func withOptions(d controller.Deps, o controller.Options) controller.Deps {
	d.Options = o
	return d
}
