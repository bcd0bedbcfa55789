package events_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	goruntime "runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/fx"
	"go.uber.org/fx/fxtest"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	k8stesting "k8s.io/client-go/testing"

	"github.com/hexagonal-operator/operator/internal/adapters/events"
	"github.com/hexagonal-operator/operator/internal/ports"
)

func startRecorder(t *testing.T, client kubernetes.Interface, opts events.Options) *events.Recorder {
	t.Helper()
	r, err := events.New(client, opts, zaptest.NewLogger(t))
	require.NoError(t, err)
	require.NoError(t, r.Start(context.Background()))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		assert.NoError(t, r.Stop(ctx))
	})
	return r
}

// waitEvents waits until namespace holds n Events and returns them.
func waitEvents(t *testing.T, cs kubernetes.Interface, namespace string, n int) []eventsv1.Event {
	t.Helper()
	var items []eventsv1.Event
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		list, err := cs.EventsV1().Events(namespace).List(context.Background(), metav1.ListOptions{})
		require.NoError(c, err)
		items = list.Items
		assert.Len(c, items, n)
	}, 10*time.Second, 20*time.Millisecond)
	return items
}

// listEvents returns namespace's Events now.
func listEvents(t *testing.T, cs kubernetes.Interface, namespace string) []eventsv1.Event {
	t.Helper()
	list, err := cs.EventsV1().Events(namespace).List(context.Background(), metav1.ListOptions{})
	require.NoError(t, err)
	return list.Items
}

func pod(namespace, name string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, UID: types.UID("uid-" + name)}}
}

// countActions counts the fake's actions of verb on Events.
func countActions(cs *fake.Clientset, verb string) int {
	n := 0
	for _, a := range cs.Actions() {
		if a.GetVerb() == verb && a.GetResource().Resource == "events" {
			n++
		}
	}
	return n
}

func TestRecorderWritesEvents(t *testing.T) {
	t.Parallel()
	cs := fake.NewClientset()
	r := startRecorder(t, cs, events.Options{})

	before := time.Now()
	r.Eventf(pod("ns", "web"), ports.EventTypeNormal, "Labeled", "Label", "set %s=%s", "hello", "world")
	e := waitEvents(t, cs, "ns", 1)[0]
	assert.Equal(t, "Pod", e.Regarding.Kind, "kind comes from the scheme for typed objects")
	assert.Equal(t, "v1", e.Regarding.APIVersion)
	assert.Equal(t, "web", e.Regarding.Name)
	assert.Equal(t, "ns", e.Regarding.Namespace)
	assert.Equal(t, types.UID("uid-web"), e.Regarding.UID)
	assert.Equal(t, "ns", e.Namespace)
	assert.Equal(t, ports.EventTypeNormal, e.Type)
	assert.Equal(t, "Labeled", e.Reason)
	assert.Equal(t, "Label", e.Action)
	assert.Equal(t, "set hello=world", e.Note)
	assert.Nil(t, e.Series)
	assert.Equal(t, events.DefaultReportingController, e.ReportingController)
	hostname, err := os.Hostname()
	require.NoError(t, err)
	assert.Equal(t, events.DefaultReportingController+"-"+hostname, e.ReportingInstance)
	assert.WithinRange(t, e.EventTime.Time, before.Truncate(time.Microsecond), time.Now())

	// client-go's name: "<regarding name>.<UnixNano in hex>".
	prefix, suffix, ok := strings.Cut(e.Name, ".")
	require.True(t, ok, e.Name)
	assert.Equal(t, "web", prefix)
	nano, err := strconv.ParseInt(suffix, 16, 64)
	require.NoError(t, err, e.Name)
	assert.WithinRange(t, time.Unix(0, nano), before, time.Now())
}

func TestRecorderClusterScopedObjectGoesToDefault(t *testing.T) {
	t.Parallel()
	cs := fake.NewClientset()
	r := startRecorder(t, cs, events.Options{})
	r.Eventf(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1"}}, ports.EventTypeNormal, "Seen", "Look", "node")
	e := waitEvents(t, cs, metav1.NamespaceDefault, 1)[0]
	assert.Equal(t, "Node", e.Regarding.Kind)
	assert.Empty(t, e.Regarding.Namespace)
	assert.Equal(t, events.DefaultReportingController, e.ReportingController)
	assert.True(t, strings.HasPrefix(e.ReportingInstance, events.DefaultReportingController+"-"), e.ReportingInstance)
}

func TestRecorderNoteAndAction(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 2000)
	tests := []struct {
		name               string
		action, note       string
		args               []any
		wantAction, wantNt string
	}{
		{"percent without args is kept", "Stop", "100% done", nil, "Stop", "100% done"},
		{"args are formatted", "Stop", "%d%% done", []any{50}, "Stop", "50% done"},
		{"empty action takes the reason", "", "note", nil, "Reason", "note"},
		{"long note is cut to the API limit", "Stop", long, nil, "Stop", long[:1024]},
		{"cut keeps runes whole", "Stop", strings.Repeat("x", 1023) + "é", nil, "Stop", strings.Repeat("x", 1023)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cs := fake.NewClientset()
			r := startRecorder(t, cs, events.Options{})
			r.Eventf(pod("ns", "p"), ports.EventTypeWarning, "Reason", tt.action, tt.note, tt.args...)
			e := waitEvents(t, cs, "ns", 1)[0]
			assert.Equal(t, tt.wantAction, e.Action)
			assert.Equal(t, tt.wantNt, e.Note)
			assert.Equal(t, ports.EventTypeWarning, e.Type)
		})
	}
}

func TestRecorderDropsWhenNotRunning(t *testing.T) {
	t.Parallel()
	cs := fake.NewClientset()
	r, err := events.New(cs, events.Options{}, zaptest.NewLogger(t))
	require.NoError(t, err)
	r.Eventf(pod("ns", "before"), ports.EventTypeNormal, "Early", "Act", "before start")
	require.NoError(t, r.Start(context.Background()))
	require.Error(t, r.Start(context.Background()), "a second Start")
	r.Eventf(pod("ns", "during"), ports.EventTypeNormal, "OnTime", "Act", "while running")
	r.Eventf(pod("ns", "during"), ports.EventTypeNormal, "AlsoOnTime", "Act", "while running")
	require.NoError(t, r.Stop(context.Background()))
	var reasons []string
	for _, e := range listEvents(t, cs, "ns") {
		reasons = append(reasons, e.Reason)
	}
	assert.ElementsMatch(t, []string{"OnTime", "AlsoOnTime"}, reasons, "an event from before Start was written")
	// After Stop: dropped, and above all no panic on a closed queue.
	r.Eventf(pod("ns", "after"), ports.EventTypeNormal, "Late", "Act", "after stop")
	require.NoError(t, r.Stop(context.Background()))
	assert.Len(t, listEvents(t, cs, "ns"), 2, "an event from after Stop was written")
	assert.EqualValues(t, 2, r.Dropped(events.DropNotRunning), "both counted as dropped")
}

func TestRecorderDropsUnrecordableEvents(t *testing.T) {
	t.Parallel()
	cs := fake.NewClientset()
	r, err := events.New(cs, events.Options{}, zaptest.NewLogger(t))
	require.NoError(t, err)
	require.NoError(t, r.Start(context.Background()))
	r.Eventf(pod("ns", "p"), "Catastrophic", "BadType", "Act", "unknown type")
	r.Eventf(&thing{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "t"}}, ports.EventTypeNormal, "NoKind", "Act", "not in the scheme")
	r.Eventf(pod("ns", "p"), ports.EventTypeNormal, "Fine", "Act", "ok")
	require.NoError(t, r.Stop(context.Background()))
	items := listEvents(t, cs, "ns")
	require.Len(t, items, 1)
	assert.Equal(t, "Fine", items[0].Reason)
	assert.EqualValues(t, 2, r.Dropped(events.DropInvalid))
}

// Repeats of an Event become its series, as client-go counts them: the
// first repeat patches the Event to a count of 2, later ones are counted
// and written when the series ends or is refreshed (minutes later). An
// Event that differs in type, action or object is an Event of its own; one
// that differs only in its note is a repeat.
func TestRecorderMakesSeriesOfRepeats(t *testing.T) {
	t.Parallel()
	cs := fake.NewClientset()
	r, err := events.New(cs, events.Options{}, zaptest.NewLogger(t))
	require.NoError(t, err)
	require.NoError(t, r.Start(context.Background()))
	p := pod("ns", "p")
	r.Eventf(p, ports.EventTypeNormal, "Labeled", "Label", "set a")
	first := waitEvents(t, cs, "ns", 1)[0]

	r.Eventf(p, ports.EventTypeNormal, "Labeled", "Label", "set a")
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		items := listEvents(t, cs, "ns")
		require.Len(c, items, 1)
		require.NotNil(c, items[0].Series)
		assert.Equal(c, int32(2), items[0].Series.Count)
		assert.Equal(c, first.Name, items[0].Name)
		assert.False(c, items[0].Series.LastObservedTime.Before(&first.EventTime))
	}, 10*time.Second, 20*time.Millisecond)

	r.Eventf(p, ports.EventTypeNormal, "Labeled", "Label", "set a")
	r.Eventf(p, ports.EventTypeNormal, "Labeled", "Label", "set b")              // other note: a repeat
	r.Eventf(p, ports.EventTypeWarning, "Labeled", "Label", "set a")             // other type
	r.Eventf(p, ports.EventTypeNormal, "Labeled", "Relabel", "set a")            // other action
	r.Eventf(pod("ns", "q"), ports.EventTypeNormal, "Labeled", "Label", "set a") // other object
	require.NoError(t, r.Stop(context.Background()))

	items := listEvents(t, cs, "ns")
	require.Len(t, items, 4)
	for _, e := range items {
		if e.Name == first.Name {
			require.NotNil(t, e.Series)
			assert.Equal(t, int32(2), e.Series.Count, "later repeats wait for the series to end")
			assert.Equal(t, "set a", e.Note)
			continue
		}
		assert.Nil(t, e.Series, "%s/%s/%s/%s is a repeat", e.Regarding.Name, e.Type, e.Action, e.Note)
	}
	assert.Equal(t, 4, countActions(cs, "create"))
	assert.Equal(t, 1, countActions(cs, "patch"), "one patch to start the series")
}

// An Event the API server refuses is dropped at once and counted.
func TestRecorderCountsRejectedEvents(t *testing.T) {
	t.Parallel()
	cs := fake.NewClientset()
	cs.PrependReactor("create", "events", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(eventsv1.Resource("events"), "", errors.New("no"))
	})
	r := startRecorder(t, cs, events.Options{})
	r.Eventf(pod("ns", "p"), ports.EventTypeNormal, "Labeled", "Label", "refused")
	require.Eventually(t, func() bool { return r.Dropped(events.DropRejected) == 1 }, 10*time.Second, 10*time.Millisecond)
	assert.Equal(t, 1, countActions(cs, "create"), "not retried")
}

// answered is an API server that takes every Event create, after wait,
// and counts them; the fake's own store takes milliseconds a create, which
// a flood of them turns into minutes under the race detector.
func answered(cs *fake.Clientset, wait func()) *atomic.Int32 {
	var n atomic.Int32
	cs.PrependReactor("create", "events", func(a k8stesting.Action) (bool, runtime.Object, error) {
		wait()
		n.Add(1)
		return true, a.(k8stesting.CreateAction).GetObject(), nil
	})
	return &n
}

// Stop writes every Event recorded before it, even when the API server
// is slow.
func TestRecorderStopFlushesTheQueue(t *testing.T) {
	t.Parallel()
	cs := fake.NewClientset()
	created := answered(cs, func() { time.Sleep(2 * time.Millisecond) })
	r, err := events.New(cs, events.Options{}, zaptest.NewLogger(t))
	require.NoError(t, err)
	require.NoError(t, r.Start(context.Background()))
	const n = 200
	for i := range n {
		r.Eventf(pod("ns", fmt.Sprint("p", i)), ports.EventTypeNormal, "Burst", "Act", "event %d", i)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, r.Stop(ctx))
	assert.EqualValues(t, n, created.Load())
}

// Stop gives up when its context ends, whatever the API server does.
func TestRecorderStopIsBoundedByItsContext(t *testing.T) {
	t.Parallel()
	cs := fake.NewClientset()
	release := make(chan struct{})
	cs.PrependReactor("create", "events", func(k8stesting.Action) (bool, runtime.Object, error) {
		<-release // an API server that does not answer
		return false, nil, nil
	})
	defer close(release)
	r, err := events.New(cs, events.Options{}, zaptest.NewLogger(t))
	require.NoError(t, err)
	require.NoError(t, r.Start(context.Background()))
	r.Eventf(pod("ns", "p"), ports.EventTypeNormal, "Stuck", "Act", "never answered")

	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	err = r.Stop(ctx)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Less(t, time.Since(start), 2*time.Second)
}

// thing is a typed object unknown to client-go's scheme.
type thing struct {
	metav1.TypeMeta
	metav1.ObjectMeta
}

func (t *thing) DeepCopyObject() runtime.Object {
	c := *t
	t.ObjectMeta.DeepCopyInto(&c.ObjectMeta)
	return &c
}

var thingGV = schema.GroupVersion{Group: "chaosapps.metamagical.io", Version: "v1"}

func addThing(s *runtime.Scheme) error {
	s.AddKnownTypeWithName(thingGV.WithKind("ChaosPod"), &thing{})
	return nil
}

func TestRecorderExtraSchemes(t *testing.T) {
	t.Parallel()
	cs := fake.NewClientset()
	r := startRecorder(t, cs, events.Options{AddToScheme: []func(*runtime.Scheme) error{addThing, nil}})
	assert.True(t, r.Scheme().Recognizes(thingGV.WithKind("ChaosPod")))
	assert.True(t, r.Scheme().Recognizes(eventsv1.SchemeGroupVersion.WithKind("Event")), "client-go's groups")
	assert.False(t, r.Scheme().Recognizes(corev1.SchemeGroupVersion.WithKind("Nonsense")))
	assert.True(t, r.Scheme().Recognizes(schema.GroupVersionKind{Group: "batch", Version: "v1", Kind: "Job"}),
		"every built-in group")

	r.Eventf(&thing{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "chaos"}}, ports.EventTypeNormal, "PodCreated", "Create", "created")
	e := waitEvents(t, cs, "ns", 1)[0]
	assert.Equal(t, "ChaosPod", e.Regarding.Kind)
	assert.Equal(t, thingGV.String(), e.Regarding.APIVersion)
}

func TestNewRejectsAFailingScheme(t *testing.T) {
	t.Parallel()
	failing := func(*runtime.Scheme) error { return fmt.Errorf("boom") }
	_, err := events.New(fake.NewClientset(), events.Options{AddToScheme: []func(*runtime.Scheme) error{failing}}, nil)
	require.ErrorContains(t, err, "boom")
}

func TestRecorderNeverBlocks(t *testing.T) {
	t.Parallel()
	cs := fake.NewClientset()
	release := make(chan struct{})
	created := answered(cs, func() { <-release }) // an API server that does not answer
	r, err := events.New(cs, events.Options{}, zap.NewNop())
	require.NoError(t, err)
	require.NoError(t, r.Start(context.Background()))

	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 2000 {
			r.Eventf(pod("ns", fmt.Sprint("p", i)), ports.EventTypeNormal, "Flood", "Act", "event %d", i)
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Eventf blocked on a stuck API server")
	}
	close(release)
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.NoError(t, r.Stop(ctx))
	t.Log("drained in", time.Since(start))
	// The queue keeps every Event; Stop deems the writes done once the sink
	// has been quiet for a moment, which on a loaded machine may cut a
	// last few.
	assert.GreaterOrEqual(t, created.Load(), int32(1990), "queued Events written once the API server answers")
}

// A burst recorded faster than it is written waits in the recorder's
// queue, not in goroutines of client-go's broadcaster, which the runtime
// keeps once made. Not parallel: it counts goroutines.
func TestRecorderBurstWaitsInTheQueue(t *testing.T) {
	cs, created := eventsAPIServer(t, func(http.ResponseWriter) bool {
		time.Sleep(time.Millisecond)
		return true
	})
	r := startRecorder(t, cs, events.Options{})
	base := goruntime.NumGoroutine()
	const n = 3000
	for i := range n {
		r.Eventf(pod("ns", fmt.Sprint("p", i)), ports.EventTypeNormal, "Burst", "Act", "event %d", i)
	}
	most := 0
	for created.Load() < n {
		most = max(most, goruntime.NumGoroutine()-base)
		time.Sleep(time.Millisecond)
	}
	// Each write in flight holds client-go's goroutine and an HTTP
	// connection's two; the queue's own is one.
	assert.Less(t, most, 100, "goroutines beside the recorder's while the burst is written")
	assert.Zero(t, r.Dropped(events.DropOverflow))
}

// A burst of Events reaches the API server a few writes at a time, not
// all at once beside the reconciles' own writes.
func TestRecorderBoundsWritesInFlight(t *testing.T) {
	t.Parallel()
	var inFlight, most atomic.Int32
	cs, created := eventsAPIServer(t, func(http.ResponseWriter) bool {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for m := most.Load(); n > m; m = most.Load() {
			if most.CompareAndSwap(m, n) {
				break
			}
		}
		time.Sleep(20 * time.Millisecond)
		return true
	})
	r := startRecorder(t, cs, events.Options{})
	const n = 40
	for i := range n {
		r.Eventf(pod("ns", fmt.Sprint("p", i)), ports.EventTypeNormal, "Burst", "Act", "event %d", i)
	}
	require.Eventually(t, func() bool { return created.Load() == n }, 10*time.Second, 10*time.Millisecond)
	assert.Equal(t, int32(events.MaxConcurrentWrites), most.Load(), "writes in flight at most")
}

// A burst of Events does not stay in memory: client-go's broadcaster keeps
// each Event it wrote for minutes, so the recorder moves to a fresh one
// every RotateEvery Events, and every Event is still written. Not
// parallel: it reads the heap.
func TestRecorderBurstDoesNotStayInMemory(t *testing.T) {
	cs := fake.NewClientset()
	created := answered(cs, func() {})
	r := startRecorder(t, cs, events.Options{})
	const n = 20 * events.RotateEvery
	var before, after goruntime.MemStats
	goruntime.GC()
	goruntime.ReadMemStats(&before)
	for i := range n {
		r.Eventf(pod("ns", fmt.Sprintf("rs-%05d", i)), ports.EventTypeNormal, "Labeled", "Label", "Added label %s", "x")
		if i%events.RotateEvery == 0 {
			time.Sleep(10 * time.Millisecond) // a burst, not a single instant
		}
	}
	// Seconds alone; many times that beside other packages' API servers
	// under the race detector.
	require.Eventually(t, func() bool { return created.Load() == n }, 2*time.Minute, 20*time.Millisecond, "every Event written")
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		cs.ClearActions() // the fake keeps every request
		goruntime.GC()
		goruntime.ReadMemStats(&after)
		// Without the rotation the broadcaster keeps every Event for minutes.
		assert.Less(c, int64(after.HeapAlloc)-int64(before.HeapAlloc), int64(n*1024/4), "heap kept after the burst")
	}, 10*time.Second, 200*time.Millisecond)
}

// A broadcaster retired while the API server is away keeps retrying its
// Events until it is back: a rotation loses none.
func TestRecorderRotationKeepsRetries(t *testing.T) {
	t.Parallel()
	var up atomic.Bool
	cs, created := eventsAPIServer(t, func(w http.ResponseWriter) bool {
		if up.Load() {
			return true
		}
		// A transport error, which client-go retries.
		if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
			_ = conn.Close()
		}
		return false
	})
	r := startRecorder(t, cs, events.Options{})
	const n = events.RotateEvery + 10 // the first RotateEvery go to a broadcaster that retires
	for i := range n {
		r.Eventf(pod("ns", fmt.Sprint("p", i)), ports.EventTypeNormal, "Away", "Act", "event %d", i)
		if i%100 == 0 {
			time.Sleep(5 * time.Millisecond) // within the broadcaster's queue
		}
	}
	time.Sleep(time.Second) // the rotation happens, writes fail
	up.Store(true)
	require.Eventually(t, func() bool { return created.Load() == n }, 40*time.Second, 50*time.Millisecond, "Events written once the API server is back: %d of %d", created, n)
}

// eventsAPIServer is an API server for Event writes (client-go's fake
// clientset answers one call at a time): each request first goes to
// before, and when it returns true the Event is created (its body echoed)
// and counted.
func eventsAPIServer(t *testing.T, before func(http.ResponseWriter) bool) (kubernetes.Interface, *atomic.Int32) {
	t.Helper()
	var created atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !before(w) {
			return
		}
		body, _ := io.ReadAll(r.Body)
		created.Add(1)
		w.Header().Set("Content-Type", r.Header.Get("Content-Type"))
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL, QPS: -1})
	require.NoError(t, err)
	return cs, &created
}

func TestNewNeedsClient(t *testing.T) {
	t.Parallel()
	_, err := events.New(nil, events.Options{}, nil)
	require.Error(t, err)
}

func TestModule(t *testing.T) {
	t.Parallel()
	cs := fake.NewClientset()
	var rec ports.EventRecorder
	var r *events.Recorder
	reg := prometheus.NewRegistry()
	app := fxtest.New(t,
		events.Module,
		fx.Supply(fx.Annotate(cs, fx.As(new(kubernetes.Interface))), zap.NewNop()),
		fx.Supply(fx.Annotate(reg, fx.As(new(prometheus.Registerer)))),
		fx.Provide(fx.Annotate(func() func(*runtime.Scheme) error { return addThing }, fx.ResultTags(`group:"event-schemes"`))),
		fx.Populate(&rec, &r),
	)
	app.RequireStart()
	defer app.RequireStop()
	assert.True(t, r.Scheme().Recognizes(thingGV.WithKind("ChaosPod")))
	rec.Eventf(pod("ns", "p"), ports.EventTypeNormal, "Labeled", "Label", "via fx")
	waitEvents(t, cs, "ns", 1)
	// operator_events_dropped_total is there from the start, one series a
	// cause, each at 0.
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP operator_events_dropped_total Events the recorder gave up on, by cause.
# TYPE operator_events_dropped_total counter
operator_events_dropped_total{cause="invalid"} 0
operator_events_dropped_total{cause="not_running"} 0
operator_events_dropped_total{cause="overflow"} 0
operator_events_dropped_total{cause="rejected"} 0
`), events.DroppedMetric))
}
