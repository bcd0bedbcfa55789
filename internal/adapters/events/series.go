package events

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// seriesWindow is client-go's: an Event repeated within it joins the
// series of the first one; a series without a repeat for that long is
// finished.
const seriesWindow = 6 * time.Minute

// refreshEvery is client-go's too: a series that goes on for longer has
// its count written at this pace, so readers see it grow.
const refreshEvery = 30 * time.Minute

// maxSeries bounds the series cache, as client-go's correlator bounds its
// LRU: a burst of distinct Events (one per object of a backlog of 100 000)
// would otherwise hold all of them for seriesWindow. Past it, the series
// seen longest ago is finished early; a repeat of it starts a new Event.
const maxSeries = 4096

// seriesKey is what makes two Events the same one repeated. The reporting
// controller and instance are the recorder's, the same for all its Events.
type seriesKey struct {
	regarding corev1.ObjectReference
	eventType string
	reason    string
	action    string
	note      string
}

// entry is one Event in the series cache: what it takes to write it again
// (the key holds the rest), and how far its writes got. Guarded by run.mu.
type entry struct {
	key       seriesKey
	name      string
	firstSeen time.Time
	lastSeen  time.Time
	count     int32     // occurrences observed
	want      int32     // the count some write was asked for
	done      int32     // the count last written, or given up on
	writtenAt time.Time // when done last moved
	pending   bool      // queued or being written
	failed    bool      // rejected by the API server: never written again

	// older and newer link the cache's entries by when they were last
	// seen, so the bound evicts the stalest in constant time.
	older, newer *entry
}

// dirty tells a series whose latest count has not been written.
func (e *entry) dirty() bool { return e.count >= 2 && e.count > e.done && !e.failed }

// run is the recorder between one Start and its Stop.
type run struct {
	r        *Recorder
	instance string
	queue    chan *entry
	// ctx is the writes' context; it ends when Stop gives up on them.
	ctx       context.Context
	cancel    context.CancelFunc
	workers   sync.WaitGroup
	stopSweep chan struct{}
	swept     chan struct{} // closed when the sweeper has returned

	// lastWrite is when a write last finished (or the run started), in
	// Unix nanoseconds: whether the writers are making progress.
	lastWrite atomic.Int64

	mu    sync.Mutex // guards what follows and every entry
	cache map[seriesKey]*entry
	// oldest and newest end the list of cached entries by lastSeen.
	oldest, newest *entry
	lastNano       int64
}

func startRun(r *Recorder, instance string) *run {
	// Not the start context: that one ends when the application has
	// started, and recording goes on until Stop.
	ctx, cancel := context.WithCancel(context.Background())
	rn := &run{
		r:         r,
		instance:  instance,
		queue:     make(chan *entry, r.queueSize),
		ctx:       ctx,
		cancel:    cancel,
		stopSweep: make(chan struct{}),
		swept:     make(chan struct{}),
		cache:     make(map[seriesKey]*entry),
	}
	rn.lastWrite.Store(time.Now().UnixNano())
	rn.workers.Add(r.maxWrites)
	for range r.maxWrites {
		go rn.work()
	}
	go rn.sweepLoop()
	return rn
}

// observe records one occurrence of the Event k: a new Event is queued for
// creation, its first repeat for turning it into a series of 2; later
// repeats only count, and are written when the series finishes, every
// refreshEvery, or on Stop — as client-go does, so a hot loop costs the
// API server two writes, not one per repeat.
//
// When the queue is full, observe waits for room outside the lock, for as
// long as the writers make progress (up to queueWait): a backlog of
// reconciles that records Events faster than they can be written is slowed
// to the writers' pace rather than losing its Events, while an API server
// that takes no Events (no write finished for stallAfter) costs a caller
// nothing: its Event is dropped at once.
func (rn *run) observe(k seriesKey) {
	now := rn.r.clock.Now()
	rn.mu.Lock()
	e := rn.cache[k]
	if e != nil && now.Sub(e.lastSeen) >= seriesWindow {
		// Finished, and the sweeper has not been by yet.
		rn.evict(e)
		e = nil
	}
	var full *entry
	switch {
	case e == nil:
		if len(rn.cache) >= rn.r.maxSeries {
			rn.evict(rn.oldest)
		}
		e = &entry{key: k, name: rn.eventName(k.regarding.Name, now), firstSeen: now, lastSeen: now, count: 1, want: 1}
		rn.cache[k] = e
		rn.link(e)
		if !rn.enqueue(e) {
			full = e
		}
	default:
		e.count++
		e.lastSeen = now
		rn.unlink(e)
		rn.link(e)
		if e.count == 2 {
			e.want = 2
			if !rn.enqueue(e) {
				full = e
			}
		}
	}
	if full == nil {
		rn.mu.Unlock()
		return
	}
	// Reserve the entry, so nobody else queues it meanwhile.
	full.pending = true
	rn.mu.Unlock()
	rn.wait(full)
}

// wait sends e to the writers once the queue has room, or gives up when
// the writers stall, after queueWait, or when Stop ends the writes, and
// counts the drop.
func (rn *run) wait(e *entry) {
	deadline := time.NewTimer(rn.r.queueWait)
	defer deadline.Stop()
	check := time.NewTicker(stallCheck)
	defer check.Stop()
wait:
	for !rn.stalled() {
		select {
		case rn.queue <- e:
			return
		case <-check.C:
		case <-deadline.C:
			break wait
		case <-rn.ctx.Done():
			break wait
		}
	}
	rn.mu.Lock()
	e.pending = false
	rn.mu.Unlock()
	rn.r.dropped.add(DropQueueFull)
	rn.r.log.Debug("event dropped, queue full", zap.String("reason", e.key.reason), zap.String("name", e.key.regarding.Name))
}

// link makes e the newest entry of the list. Called with mu held.
func (rn *run) link(e *entry) {
	e.older, e.newer = rn.newest, nil
	if rn.newest != nil {
		rn.newest.newer = e
	} else {
		rn.oldest = e
	}
	rn.newest = e
}

// unlink takes e out of the list. Called with mu held.
func (rn *run) unlink(e *entry) {
	if e.older != nil {
		e.older.newer = e.newer
	} else {
		rn.oldest = e.newer
	}
	if e.newer != nil {
		e.newer.older = e.older
	} else {
		rn.newest = e.older
	}
	e.older, e.newer = nil, nil
}

// evict takes e out of the cache and finishes its series. Called with mu
// held.
func (rn *run) evict(e *entry) {
	delete(rn.cache, e.key)
	rn.unlink(e)
	rn.finish(e)
}

// finish asks for the final count of a series. Called with mu held.
func (rn *run) finish(e *entry) {
	if e.dirty() {
		e.want = e.count
		rn.enqueueOrDrop(e)
	}
}

// stalled reports whether no write has finished for stallAfter.
func (rn *run) stalled() bool {
	return time.Since(time.Unix(0, rn.lastWrite.Load())) > stallAfter
}

// enqueue hands e to the writers unless it is already with them: the
// writer then writes the latest count before letting go of it. It never
// blocks: it reports false when the queue is full, and the caller decides
// whether to wait. Called with mu held.
func (rn *run) enqueue(e *entry) bool {
	if e.pending || e.failed {
		return true
	}
	select {
	case rn.queue <- e:
		e.pending = true
		return true
	default:
		return false
	}
}

// enqueueOrDrop is enqueue for the sweeper, which must not wait: a full
// queue drops the write, as client-go's broadcaster does, and the final
// count goes out with a later sweep or on Stop. Called with mu held.
func (rn *run) enqueueOrDrop(e *entry) {
	if !rn.enqueue(e) {
		rn.r.dropped.add(DropQueueFull)
		rn.r.log.Debug("event dropped, queue full", zap.String("reason", e.key.reason), zap.String("name", e.key.regarding.Name))
	}
}

// eventName is client-go's "<regarding name>.<hex UnixNano>", made unique
// within the recorder (a coarse clock could give two Events the same
// nanosecond). A name that is not a valid one (a long regarding name) is
// replaced by a random one, as client-go does.
func (rn *run) eventName(refName string, now time.Time) string {
	n := now.UnixNano()
	if n <= rn.lastNano {
		n = rn.lastNano + 1
	}
	rn.lastNano = n
	name := fmt.Sprintf("%v.%x", refName, n)
	if len(validation.IsDNS1123Subdomain(name)) == 0 {
		return name
	}
	b := make([]byte, 16)
	_, _ = rand.Read(b) // never fails
	return hex.EncodeToString(b)
}

// event builds e's Event as it stands. Called with mu held.
func (rn *run) event(e *entry) *eventsv1.Event {
	namespace := e.key.regarding.Namespace
	if namespace == "" {
		namespace = metav1.NamespaceDefault
	}
	ev := &eventsv1.Event{
		ObjectMeta:          metav1.ObjectMeta{Name: e.name, Namespace: namespace},
		EventTime:           metav1.NewMicroTime(e.firstSeen),
		ReportingController: rn.r.controller,
		ReportingInstance:   rn.instance,
		Action:              e.key.action,
		Reason:              e.key.reason,
		Regarding:           e.key.regarding,
		Note:                e.key.note,
		Type:                e.key.eventType,
	}
	if e.count >= 2 {
		ev.Series = &eventsv1.EventSeries{Count: e.count, LastObservedTime: metav1.NewMicroTime(e.lastSeen)}
	}
	return ev
}

func (rn *run) sweepLoop() {
	defer close(rn.swept)
	tick := rn.r.clock.NewTicker(rn.r.sweepEvery)
	defer tick.Stop()
	for {
		select {
		case <-rn.stopSweep:
			return
		case <-tick.C():
			rn.sweep()
		}
	}
}

// sweep evicts the Events not seen for seriesWindow, writing the final
// count of their series, and refreshes the counts of long series.
func (rn *run) sweep() {
	now := rn.r.clock.Now()
	rn.mu.Lock()
	defer rn.mu.Unlock()
	for _, e := range rn.cache {
		switch {
		case now.Sub(e.lastSeen) >= seriesWindow:
			rn.evict(e)
		case e.dirty() && now.Sub(e.writtenAt) >= refreshEvery:
			rn.finish(e)
		}
	}
}

// stop ends the run: no more sweeps, the counts of unwritten series join
// the queue, and the writers drain it. When ctx ends first, the writes
// left are abandoned.
func (rn *run) stop(ctx context.Context) error {
	// Close the queue only once nothing can send on it: Eventf is kept
	// out by the recorder, the sweeper by waiting for it (it never
	// blocks).
	close(rn.stopSweep)
	<-rn.swept
	err := rn.flush(ctx)
	close(rn.queue)
	done := make(chan struct{})
	go func() {
		rn.workers.Wait()
		close(done)
	}()
	if err == nil {
		select {
		case <-done:
		case <-ctx.Done():
			err = ctx.Err()
		}
	}
	// Ends the writes in flight and makes the writers skip the rest; they
	// return soon after, on their own.
	rn.cancel()
	return err
}

// flush queues the series whose latest count is not written. Unlike
// enqueue it waits for room, within ctx: Stop promises them.
func (rn *run) flush(ctx context.Context) error {
	rn.mu.Lock()
	var todo []*entry
	for _, e := range rn.cache {
		if !e.dirty() {
			continue
		}
		e.want = e.count
		if !e.pending {
			e.pending = true
			todo = append(todo, e)
		}
	}
	rn.mu.Unlock()
	for _, e := range todo {
		select {
		case rn.queue <- e:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}
