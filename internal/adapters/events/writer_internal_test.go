package events

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/hexagonal-operator/operator/internal/kubeclient"
	"github.com/hexagonal-operator/operator/internal/kubeclient/kubeclienttest"
	"github.com/hexagonal-operator/operator/internal/ports"
)

// slowAPI is an API server whose Event writes take a while, or wait for
// gate, and that records the most writes it saw at once. Unlike the fake
// clientset's reactors, which run one at a time, its writes overlap.
type slowAPI struct {
	kubeclient.Interface
	delay    time.Duration
	gate     chan struct{} // when set, each write waits until it is closed
	entered  chan struct{} // when set, told of each write
	inflight atomic.Int32
	most     atomic.Int32
}

func (s *slowAPI) EventsV1() kubeclient.EventsV1Interface { return slowEventsV1{s} }

func (s *slowAPI) enter() {
	n := s.inflight.Add(1)
	for m := s.most.Load(); n > m; m = s.most.Load() {
		if s.most.CompareAndSwap(m, n) {
			break
		}
	}
	if s.entered != nil {
		s.entered <- struct{}{}
	}
	if s.gate != nil {
		<-s.gate
	}
	time.Sleep(s.delay)
}

type slowEventsV1 struct{ s *slowAPI }

func (g slowEventsV1) Events(ns string) kubeclient.EventInterface {
	return slowEvents{g.s.Interface.EventsV1().Events(ns), g.s}
}

type slowEvents struct {
	kubeclient.EventInterface
	s *slowAPI
}

func (e slowEvents) Create(ctx context.Context, ev *eventsv1.Event, opts metav1.CreateOptions) (*eventsv1.Event, error) {
	e.s.enter()
	defer e.s.inflight.Add(-1)
	return e.EventInterface.Create(ctx, ev, opts)
}

func (e slowEvents) Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, sub ...string) (*eventsv1.Event, error) {
	e.s.enter()
	defer e.s.inflight.Add(-1)
	return e.EventInterface.Patch(ctx, name, pt, data, opts, sub...)
}

func newTestRecorder(t *testing.T, client kubeclient.Interface, opts Options, log *zap.Logger) *Recorder {
	t.Helper()
	r, err := New(client, opts, log)
	require.NoError(t, err)
	r.retryAfter = time.Millisecond
	return r
}

func stop(t *testing.T, r *Recorder) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, r.Stop(ctx))
}

func testPod(name string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("uid-" + name)}}
}

func events(t *testing.T, cs *fake.Clientset) []eventsv1.Event {
	t.Helper()
	list, err := cs.EventsV1().Events("ns").List(context.Background(), metav1.ListOptions{})
	require.NoError(t, err)
	return list.Items
}

func countActions(cs *fake.Clientset, verb string) int {
	n := 0
	for _, a := range cs.Actions() {
		if a.GetVerb() == verb && a.GetResource().Resource == "events" {
			n++
		}
	}
	return n
}

// A burst of Events reaches the API server a few at a time, and Stop waits
// until every queued one is written: none is lost on a graceful stop.
func TestBurstIsBoundedAndDrainedOnStop(t *testing.T) {
	t.Parallel()
	cs := fake.NewClientset()
	api := &slowAPI{Interface: kubeclienttest.Wrap(cs), delay: 10 * time.Millisecond}
	r := newTestRecorder(t, api, Options{MaxConcurrentWrites: 3}, nil)
	require.NoError(t, r.Start(context.Background()))

	const n = 60
	for i := range n {
		r.Eventf(testPod(fmt.Sprint("p", i)), ports.EventTypeNormal, "Burst", "Act", "event %d", i)
	}
	stop(t, r)

	assert.Len(t, events(t, cs), n, "every Event recorded before Stop is written")
	assert.Equal(t, int32(3), api.most.Load(), "MaxConcurrentWrites at once, no more")
}

func TestDefaultConcurrency(t *testing.T) {
	t.Parallel()
	cs := fake.NewClientset()
	api := &slowAPI{Interface: kubeclienttest.Wrap(cs), delay: 10 * time.Millisecond}
	r := newTestRecorder(t, api, Options{}, nil)
	require.NoError(t, r.Start(context.Background()))
	for i := range 40 {
		r.Eventf(testPod(fmt.Sprint("p", i)), ports.EventTypeNormal, "Burst", "Act", "event %d", i)
	}
	stop(t, r)
	assert.Equal(t, int32(DefaultMaxConcurrentWrites), api.most.Load())
}

// A queue that stays full drops new Events, with a debug line each, once
// Eventf has waited its bound for room.
func TestFullQueueDropsEventsAfterWaiting(t *testing.T) {
	t.Parallel()
	cs := fake.NewClientset()
	api := &slowAPI{Interface: kubeclienttest.Wrap(cs), gate: make(chan struct{}), entered: make(chan struct{}, 100)}
	core, logs := observer.New(zapcore.DebugLevel)
	r := newTestRecorder(t, api, Options{MaxConcurrentWrites: 1}, zap.New(core))
	r.queueSize = 5
	r.queueWait = 5 * time.Millisecond
	require.NoError(t, r.Start(context.Background()))

	r.Eventf(testPod("first"), ports.EventTypeNormal, "Flood", "Act", "in flight")
	<-api.entered // the one writer is busy with it
	start := time.Now()
	for i := range 20 {
		r.Eventf(testPod(fmt.Sprint("p", i)), ports.EventTypeNormal, "Flood", "Act", "event %d", i)
	}
	assert.GreaterOrEqual(t, time.Since(start), 15*r.queueWait, "each dropped Event waited for room first")
	assert.Equal(t, 15, logs.FilterMessage("event dropped, queue full").Len())
	assert.EqualValues(t, 15, r.Dropped(DropQueueFull), "counted in operator_events_dropped_total")
	close(api.gate)
	stop(t, r)

	assert.Len(t, events(t, cs), 6, "the one in flight and the five queued")
}

// A burst larger than the queue, written slower than it is recorded, loses
// nothing: Eventf waits for room, so the burst goes at the writers' pace.
func TestBurstLargerThanTheQueueIsWrittenWhole(t *testing.T) {
	t.Parallel()
	cs := fake.NewClientset()
	api := &slowAPI{Interface: kubeclienttest.Wrap(cs), delay: 2 * time.Millisecond}
	r := newTestRecorder(t, api, Options{MaxConcurrentWrites: 2}, nil)
	r.queueSize = 5
	require.NoError(t, r.Start(context.Background()))
	for i := range 60 {
		r.Eventf(testPod(fmt.Sprint("p", i)), ports.EventTypeNormal, "Burst", "Act", "event %d", i)
	}
	stop(t, r)
	assert.Zero(t, r.Dropped(DropQueueFull))
	assert.Len(t, events(t, cs), 60)
}

func TestWriteRetries(t *testing.T) {
	t.Parallel()
	gr := schema.GroupResource{Group: "events.k8s.io", Resource: "events"}
	unavailable := apierrors.NewServiceUnavailable("busy")
	tests := []struct {
		name        string
		errs        []error // the answers to the first creates; then success
		wantCreates int
		wantWritten bool
		wantLog     string
		wantLogs    int
		wantDropped string // the cause counted, "" for none
	}{
		{"transient errors are retried", []error{unavailable, errors.New("connection refused")}, 3, true, "event write failed, retrying", 2, ""},
		{"three tries, no more", []error{unavailable, unavailable, unavailable, unavailable}, 3, false, "event dropped, write kept failing", 1, DropWriteFailed},
		{"too many requests is transient", []error{apierrors.NewTooManyRequests("slow down", 1)}, 2, true, "event write failed, retrying", 1, ""},
		{"invalid is dropped at once", []error{apierrors.NewInvalid(schema.GroupKind{Group: gr.Group, Kind: "Event"}, "x", field.ErrorList{field.Required(field.NewPath("note"), "")})}, 1, false, "event rejected", 1, DropRejected},
		{"forbidden is dropped at once", []error{apierrors.NewForbidden(gr, "x", errors.New("namespace terminating"))}, 1, false, "event rejected", 1, DropRejected},
		{"already exists is dropped at once", []error{apierrors.NewAlreadyExists(gr, "x")}, 1, false, "event dropped, already exists", 1, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cs := fake.NewClientset()
			var calls atomic.Int32
			cs.PrependReactor("create", "events", func(k8stesting.Action) (bool, runtime.Object, error) {
				if n := int(calls.Add(1)); n <= len(tt.errs) {
					return true, nil, tt.errs[n-1]
				}
				return false, nil, nil
			})
			core, logs := observer.New(zapcore.DebugLevel)
			r := newTestRecorder(t, kubeclienttest.Wrap(cs), Options{}, zap.New(core))
			require.NoError(t, r.Start(context.Background()))
			r.Eventf(testPod("p"), ports.EventTypeNormal, "Retry", "Act", "note")
			stop(t, r)

			assert.Equal(t, tt.wantCreates, countActions(cs, "create"))
			if tt.wantWritten {
				assert.Len(t, events(t, cs), 1)
			} else {
				assert.Empty(t, events(t, cs))
			}
			assert.Equal(t, tt.wantLogs, logs.FilterMessage(tt.wantLog).Len(), "one line for a dropped Event, one per retry")
			for _, cause := range dropCauses {
				want := 0
				if cause == tt.wantDropped {
					want = 1
				}
				assert.EqualValues(t, want, r.Dropped(cause), "dropped for %s", cause)
			}
		})
	}
}

// An Event rejected by the API server is not tried again for its series.
func TestRejectedEventIsNotPatched(t *testing.T) {
	t.Parallel()
	cs := fake.NewClientset()
	cs.PrependReactor("create", "events", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewBadRequest("no")
	})
	r := newTestRecorder(t, kubeclienttest.Wrap(cs), Options{}, nil)
	require.NoError(t, r.Start(context.Background()))
	for range 5 {
		r.Eventf(testPod("p"), ports.EventTypeNormal, "Bad", "Act", "note")
	}
	stop(t, r)
	assert.Equal(t, 1, countActions(cs, "create"))
	assert.Zero(t, countActions(cs, "patch"))
}

// A series whose Event is gone (deleted, expired) creates it again with
// its count.
func TestSeriesRecreatesAMissingEvent(t *testing.T) {
	t.Parallel()
	cs := fake.NewClientset()
	r := newTestRecorder(t, kubeclienttest.Wrap(cs), Options{}, nil)
	require.NoError(t, r.Start(context.Background()))
	r.Eventf(testPod("p"), ports.EventTypeNormal, "Again", "Act", "note")
	var name string
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		items := events(t, cs)
		require.Len(c, items, 1)
		name = items[0].Name
	}, 10*time.Second, 10*time.Millisecond)
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Zero(c, r.run.pendingWrites())
	}, 10*time.Second, 10*time.Millisecond)
	require.NoError(t, cs.EventsV1().Events("ns").Delete(context.Background(), name, metav1.DeleteOptions{}))

	r.Eventf(testPod("p"), ports.EventTypeNormal, "Again", "Act", "note")
	stop(t, r)
	items := events(t, cs)
	require.Len(t, items, 1)
	assert.Equal(t, name, items[0].Name)
	require.NotNil(t, items[0].Series)
	assert.Equal(t, int32(2), items[0].Series.Count)
	assert.Equal(t, 1, countActions(cs, "patch"), "the patch that found nothing")
	assert.Equal(t, 2, countActions(cs, "create"))
}

// pendingWrites counts the entries with the writers.
func (rn *run) pendingWrites() int {
	rn.mu.Lock()
	defer rn.mu.Unlock()
	n := 0
	for _, e := range rn.cache {
		if e.pending {
			n++
		}
	}
	return n
}

func TestTransient(t *testing.T) {
	t.Parallel()
	gr := schema.GroupResource{Resource: "events"}
	tests := []struct {
		err  error
		want bool
	}{
		{errors.New("dial tcp: connection refused"), true},
		{fmt.Errorf("create event: %w", apierrors.NewInternalError(errors.New("etcd"))), true},
		{apierrors.NewServerTimeout(gr, "create", 1), true},
		{apierrors.NewTimeoutError("slow", 1), true},
		{apierrors.NewServiceUnavailable("down"), true},
		{apierrors.NewTooManyRequests("later", 1), true},
		{apierrors.NewAlreadyExists(gr, "x"), false},
		{apierrors.NewBadRequest("bad"), false},
		{apierrors.NewNotFound(gr, "x"), false},
		{apierrors.NewUnauthorized("who"), false},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, transient(tt.err), "%v", tt.err)
	}
}
