package events

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes/fake"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/hexagonal-operator/operator/internal/kubeclient/kubeclienttest"
	"github.com/hexagonal-operator/operator/internal/ports"
)

func (rn *run) cacheLen() int {
	rn.mu.Lock()
	defer rn.mu.Unlock()
	return len(rn.cache)
}

// entryOf returns a copy of the cached entry regarding name.
func (rn *run) entryOf(t *testing.T, name string) entry {
	t.Helper()
	rn.mu.Lock()
	defer rn.mu.Unlock()
	for _, e := range rn.cache {
		if e.key.regarding.Name == name {
			return *e
		}
	}
	t.Fatalf("no entry regarding %s", name)
	return entry{}
}

// startFakeClock starts a recorder on cs whose clock only moves when the
// test steps it.
func startFakeClock(t *testing.T, cs *fake.Clientset, sweep time.Duration) (*Recorder, *clocktesting.FakeClock) {
	t.Helper()
	fc := clocktesting.NewFakeClock(time.Now())
	r := newTestRecorder(t, kubeclienttest.Wrap(cs), Options{}, nil)
	r.clock = fc
	r.sweepEvery = sweep
	require.NoError(t, r.Start(context.Background()))
	return r, fc
}

// waitIdle waits until no write is queued or in flight.
func waitIdle(t *testing.T, r *Recorder) {
	t.Helper()
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Zero(c, r.run.pendingWrites())
	}, 10*time.Second, 5*time.Millisecond)
}

func eventOf(t *testing.T, items []eventsv1.Event, name string) []eventsv1.Event {
	t.Helper()
	var out []eventsv1.Event
	for _, e := range items {
		if e.Regarding.Name == name {
			out = append(out, e)
		}
	}
	return out
}

// requireFinalCount waits until the one Event regarding name carries a
// series of count, the final count its eviction writes.
func requireFinalCount(t *testing.T, cs *fake.Clientset, name string, count int32) {
	t.Helper()
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		got := eventOf(t, events(t, cs), name)
		require.Len(c, got, 1)
		require.NotNil(c, got[0].Series)
		assert.Equal(c, count, got[0].Series.Count, "the final count, written on eviction")
	}, 10*time.Second, 5*time.Millisecond)
}

// The cache holds an Event only while a repeat could join its series:
// the sweeper evicts it seriesWindow after it was last seen, writing the
// final count of its series, and a later repeat is an Event of its own.
func TestSweeperEvictsFinishedEvents(t *testing.T) {
	t.Parallel()
	cs := fake.NewClientset()
	r, fc := startFakeClock(t, cs, sweepEvery)
	const n = 100
	for i := range n {
		r.Eventf(testPod(fmt.Sprint("p", i)), ports.EventTypeNormal, "Labeled", "Label", "note")
	}
	waitIdle(t, r)
	for range 3 {
		r.Eventf(testPod("p0"), ports.EventTypeNormal, "Labeled", "Label", "note")
	}
	waitIdle(t, r)
	require.Equal(t, n, r.run.cacheLen())
	require.Eventually(t, fc.HasWaiters, 10*time.Second, time.Millisecond, "the sweeper's ticker")

	fc.Step(seriesWindow - time.Minute)
	r.run.sweep()
	assert.Equal(t, n, r.run.cacheLen(), "evicted within the series window")

	fc.Step(time.Minute) // the ticker fires
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Zero(c, r.run.cacheLen())
	}, 10*time.Second, 5*time.Millisecond)
	requireFinalCount(t, cs, "p0", 4)

	r.Eventf(testPod("p1"), ports.EventTypeNormal, "Labeled", "Label", "note")
	stop(t, r)
	got := eventOf(t, events(t, cs), "p1")
	require.Len(t, got, 2, "a repeat after the window is a new Event")
	assert.Nil(t, got[0].Series)
	assert.Nil(t, got[1].Series)
	assert.Len(t, events(t, cs), n+1)
}

// cachedNames lists the names the cached entries regard, oldest first, by
// the list the bound evicts from.
func (rn *run) cachedNames() []string {
	rn.mu.Lock()
	defer rn.mu.Unlock()
	var names []string
	for e := rn.oldest; e != nil; e = e.newer {
		names = append(names, e.key.regarding.Name)
	}
	return names
}

// The cache holds at most maxSeries entries: past it, the one seen longest
// ago is evicted at once, its series finished with its final count, and a
// repeat of it is an Event of its own.
func TestCacheIsBoundedEvictingTheStalest(t *testing.T) {
	t.Parallel()
	cs := fake.NewClientset()
	r := newTestRecorder(t, kubeclienttest.Wrap(cs), Options{}, nil)
	r.clock = clocktesting.NewFakeClock(time.Now())
	r.sweepEvery = time.Hour // no sweep in this test
	r.maxSeries = 3
	require.NoError(t, r.Start(context.Background()))
	record := func(name string) {
		r.Eventf(testPod(name), ports.EventTypeNormal, "Labeled", "Label", "note")
		waitIdle(t, r)
	}
	for range 3 {
		record("p0") // a series of 3, its count not written yet
	}
	record("p1")
	record("p2")
	record("p1") // seen after p2
	assert.Equal(t, []string{"p0", "p2", "p1"}, r.run.cachedNames())

	record("p3")
	assert.Equal(t, []string{"p2", "p1", "p3"}, r.run.cachedNames(), "p0, the stalest, evicted")
	requireFinalCount(t, cs, "p0", 3)

	record("p4")
	assert.Equal(t, []string{"p1", "p3", "p4"}, r.run.cachedNames(), "p2 evicted, not p1, seen later")
	record("p0")
	assert.Equal(t, []string{"p3", "p4", "p0"}, r.run.cachedNames())
	stop(t, r)

	assert.Len(t, eventOf(t, events(t, cs), "p0"), 2, "a repeat of an evicted Event is a new Event")
	assert.Len(t, events(t, cs), 6)
}

// A repeat after the window starts a new Event even when the sweeper has
// not been by, and the old series still gets its final count.
func TestRepeatAfterTheWindowStartsANewEvent(t *testing.T) {
	t.Parallel()
	cs := fake.NewClientset()
	r, fc := startFakeClock(t, cs, time.Hour) // no sweep in this test
	for range 3 {
		r.Eventf(testPod("p"), ports.EventTypeNormal, "Labeled", "Label", "note")
	}
	waitIdle(t, r)
	fc.Step(seriesWindow)
	r.Eventf(testPod("p"), ports.EventTypeNormal, "Labeled", "Label", "note")
	assert.Equal(t, 1, r.run.cacheLen(), "the new Event replaced the old one")
	stop(t, r)

	items := events(t, cs)
	require.Len(t, items, 2)
	var counts []int32
	for _, e := range items {
		if e.Series == nil {
			counts = append(counts, 1)
		} else {
			counts = append(counts, e.Series.Count)
		}
	}
	assert.ElementsMatch(t, []int32{3, 1}, counts)
}

// A series that goes on has its count written every refreshEvery.
func TestLongSeriesIsRefreshed(t *testing.T) {
	t.Parallel()
	cs := fake.NewClientset()
	r, fc := startFakeClock(t, cs, time.Hour) // sweeps are the test's
	r.Eventf(testPod("p"), ports.EventTypeNormal, "Labeled", "Label", "note")
	waitIdle(t, r)
	r.Eventf(testPod("p"), ports.EventTypeNormal, "Labeled", "Label", "note")
	waitIdle(t, r)
	require.Equal(t, int32(2), r.run.entryOf(t, "p").done)

	const step = 5 * time.Minute // within the window: the series goes on
	for range refreshEvery/step - 1 {
		fc.Step(step)
		r.Eventf(testPod("p"), ports.EventTypeNormal, "Labeled", "Label", "note")
		r.run.sweep()
		require.Equal(t, int32(2), r.run.entryOf(t, "p").want, "refreshed before refreshEvery")
	}
	fc.Step(step)
	r.Eventf(testPod("p"), ports.EventTypeNormal, "Labeled", "Label", "note")
	r.run.sweep()
	want := int32(2 + refreshEvery/step)
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		items := events(t, cs)
		require.Len(c, items, 1)
		require.NotNil(c, items[0].Series)
		assert.Equal(c, want, items[0].Series.Count)
		assert.True(c, items[0].Series.LastObservedTime.Time.Equal(fc.Now().Truncate(time.Microsecond)))
	}, 10*time.Second, 5*time.Millisecond)
	stop(t, r)
}

func TestEventNames(t *testing.T) {
	t.Parallel()
	rn := &run{}
	now := time.Unix(0, 0x10)
	assert.Equal(t, "p.10", rn.eventName("p", now))
	assert.Equal(t, "q.11", rn.eventName("q", now))
	assert.Equal(t, "p.12", rn.eventName("p", now), "unique within the recorder, whatever the clock says")

	long := strings.Repeat("a", 250)
	name := rn.eventName(long, now)
	assert.Empty(t, validation.IsDNS1123Subdomain(name), name)
	assert.NotEqual(t, name, rn.eventName(long, now))
}
