package events

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/tools/reference"
	"k8s.io/utils/buffer"

	"github.com/hexagonal-operator/operator/internal/ports"
)

// DefaultReportingController names the operator in every Event's
// reportingController.
const DefaultReportingController = "hexagonal-operator"

// maxNoteLength is the API server's limit on an Event's note; a longer one
// would be rejected and the Event lost.
const maxNoteLength = 1024

// settle is how long Stop waits for the sink to stay idle before it
// considers the Events handed to the broadcaster written: the broadcaster
// hands each to a goroutine of its own, which Shutdown does not wait for.
const settle = 100 * time.Millisecond

// RotateEvery is how many Events one client-go broadcaster records before
// the recorder starts a fresh one. client-go's keeps every Event it wrote
// for six to twelve minutes, to join repeats into series; a burst of
// Events (one per ReplicaSet when thousands are labeled at once) would hold
// that memory as long. The old broadcaster writes what it was handed and
// goes; a repeat after the change starts a new series.
const RotateEvery = 1024

// QueueLength is how many Events may wait for the API server; one more is
// dropped (cause "overflow"). The queue holds what a burst records faster
// than the writes go, so that client-go's broadcaster, which starts a
// goroutine for every Event it is handed, is handed them only as fast as
// they are written: goroutines, once made, stay in the runtime for good.
// It is sized for a cold start of the largest cluster docs/performance.md
// measures, one Event per object labeled at once; its memory is taken only
// while Events wait.
const QueueLength = 1 << 17

// handAhead is how many writes may be begun and not ended before the
// queue waits; twice the slots, so a slot freed finds the next write ready.
const handAhead = 2 * MaxConcurrentWrites

// arrival bounds the wait for a handed Event to reach the sink: a repeat
// joins its series without a write, and never arrives.
const arrival = 5 * time.Millisecond

// retireGrace bounds how long an old broadcaster's writes may go on (client-go
// retries a failing one for about two minutes).
const retireGrace = 2 * time.Minute

// Options configure the [Recorder]. The zero value is ready to use.
type Options struct {
	// AddToScheme registers more types (the ChaosPod API) in the
	// recorder's scheme, next to client-go's built-in kinds.
	AddToScheme []func(*runtime.Scheme) error
}

// Recorder records events.k8s.io/v1 Events through client-go's
// tools/events broadcaster.
type Recorder struct {
	scheme   *runtime.Scheme
	log      *zap.Logger
	dropped  *prometheus.CounterVec
	client   kubernetes.Interface
	flow     *flow // shared by every broadcaster's sink
	queue    *waiting
	drain    chan struct{} // closed by Stop: hand what is queued, then return
	pumped   chan struct{} // closed when the queue's goroutine has returned
	retiring sync.WaitGroup
	// retireCtx bounds old broadcasters' writes; cut when Stop's ends.
	retireCtx context.Context
	cut       context.CancelFunc

	mu      sync.RWMutex // guards what follows
	current *generation  // nil when not running
	started bool
	running bool // Events are queued
}

// queued is an Event waiting for its turn.
type queued struct {
	regarding                       *corev1.ObjectReference
	eventType, reason, action, note string
}

// waiting is the queue, oldest first: a ring that grows while a burst
// waits in it and is let go once empty (k8s.io/utils' buffer.Ring, as
// client-go's informers queue their notifications), where a channel's
// buffer is allocated whole at the start.
type waiting struct {
	mu    sync.Mutex
	ring  buffer.Ring[*queued]
	ready chan struct{} // one token: an Event was added
}

// push adds q unless QueueLength Events wait already.
func (w *waiting) push(q *queued) bool {
	w.mu.Lock()
	if w.ring.Len() >= QueueLength {
		w.mu.Unlock()
		return false
	}
	w.ring.WriteOne(q)
	w.mu.Unlock()
	select {
	case w.ready <- struct{}{}:
	default:
	}
	return true
}

// pop takes the oldest Event; false when none waits.
func (w *waiting) pop() (*queued, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.ring.ReadOne()
}

// generation is one client-go broadcaster and the sink it writes to.
type generation struct {
	broadcaster events.EventBroadcaster
	recorder    events.EventRecorder
	sink        *sink
	cancel      context.CancelFunc
	// handed and seen count the Events passed to the broadcaster and
	// those it has distributed: client-go hands each over from a
	// goroutine of its own, and the broadcaster is shut once they match.
	handed, seen atomic.Uint64
}

var _ ports.EventRecorder = (*Recorder)(nil)

// New returns a recorder that writes through client once started. It builds
// the recorder's own scheme from client-go's and opts.AddToScheme, and does
// no I/O.
func New(client kubernetes.Interface, opts Options, log *zap.Logger) (*Recorder, error) {
	if client == nil {
		return nil, errors.New("event recorder: a Kubernetes client is required")
	}
	if log == nil {
		log = zap.NewNop()
	}
	scheme := runtime.NewScheme()
	for _, add := range append([]func(*runtime.Scheme) error{clientgoscheme.AddToScheme}, opts.AddToScheme...) {
		if add == nil {
			continue
		}
		if err := add(scheme); err != nil {
			return nil, fmt.Errorf("event recorder: build scheme: %w", err)
		}
	}
	r := &Recorder{
		scheme: scheme, log: log, dropped: newDropped(), client: client,
		flow:  &flow{slots: make(chan struct{}, MaxConcurrentWrites), moved: make(chan struct{}, 1)},
		queue: &waiting{ready: make(chan struct{}, 1)}, drain: make(chan struct{}), pumped: make(chan struct{}),
	}
	r.retireCtx, r.cut = context.WithCancel(context.Background())
	return r, nil
}

// Start begins sending Events to the API server. A recorder starts once.
func (r *Recorder) Start(context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.started {
		return errors.New("event recorder: already started")
	}
	g, err := r.newGeneration()
	if err != nil {
		return fmt.Errorf("event recorder: start: %w", err)
	}
	r.current, r.started, r.running = g, true, true
	go r.pump()
	return nil
}

// pump hands the queued Events to the broadcaster, until Stop.
func (r *Recorder) pump() {
	defer close(r.pumped)
	for {
		q, ok := r.queue.pop()
		if !ok {
			select {
			case <-r.queue.ready:
				continue
			case <-r.drain:
				if q, ok = r.queue.pop(); !ok {
					return
				}
			}
		}
		if !r.hand(q) {
			return // cut by Stop's context
		}
	}
}

// hand passes q to the current broadcaster once fewer than handAhead
// writes are begun and not ended, and waits for it to reach the sink. It
// returns false when Stop's context has ended.
func (r *Recorder) hand(q *queued) bool {
	f, cut := r.flow, r.retireCtx
	if !f.wait(cut, 0, func() bool { return f.active.Load() < handAhead }) {
		return false
	}
	r.mu.RLock()
	g := r.current
	r.mu.RUnlock()
	began := f.began.Load()
	g.recorder.Eventf(q.regarding, nil, q.eventType, q.reason, q.action, "%s", q.note)
	if g.handed.Add(1) == RotateEvery {
		go r.rotate(g)
	}
	return f.wait(cut, arrival, func() bool { return f.began.Load() != began })
}

// newGeneration starts a broadcaster writing to a sink of its own.
func (r *Recorder) newGeneration() (*generation, error) {
	g := &generation{sink: &sink{EventSink: &events.EventSinkImpl{Interface: r.client.EventsV1()}, dropped: r.dropped, log: r.log, flow: r.flow, retrying: map[*eventsv1.Event]bool{}}}
	// Not the start context: recording goes on until the broadcaster goes.
	ctx, cancel := context.WithCancel(context.Background())
	b := events.NewBroadcaster(g.sink)
	_, err := b.StartEventWatcher(func(runtime.Object) { g.seen.Add(1) })
	if err == nil {
		err = b.StartRecordingToSinkWithContext(ctx)
	}
	if err != nil {
		cancel()
		b.Shutdown()
		return nil, err
	}
	g.broadcaster, g.cancel, g.recorder = b, cancel, b.NewRecorder(r.scheme, DefaultReportingController)
	return g, nil
}

// rotate puts a fresh broadcaster in place of old, which retires: it
// writes what it was handed, within retireGrace, and goes with its cache.
func (r *Recorder) rotate(old *generation) {
	r.mu.Lock()
	if r.current != old {
		r.mu.Unlock()
		return // stopped
	}
	g, err := r.newGeneration()
	if err != nil {
		r.mu.Unlock()
		r.log.Error("event recorder: rotate broadcaster", zap.Error(err))
		return
	}
	r.current = g
	r.retiring.Add(1)
	r.mu.Unlock()
	defer r.retiring.Done()
	ctx, cancel := context.WithTimeout(r.retireCtx, retireGrace)
	defer cancel()
	_ = old.retire(ctx, true)
}

// retire shuts g once what it was handed is distributed and written, or
// when ctx ends. With retries, a sink with Events client-go retries (the
// API server away) is not idle: the retries go on.
func (g *generation) retire(ctx context.Context, retries bool) error {
	defer g.cancel()
	err := g.handedOver(ctx)
	g.broadcaster.Shutdown()
	if err == nil {
		err = g.sink.idle(ctx, retries)
	}
	return err
}

// Stop shuts the broadcasters down and waits within ctx until the writes
// of the Events recorded before are done; when ctx ends first, the writes
// left are abandoned and Stop returns ctx's error.
func (r *Recorder) Stop(ctx context.Context) error {
	r.mu.Lock()
	running := r.running
	r.running = false
	r.mu.Unlock()
	if !running {
		return nil
	}
	defer context.AfterFunc(ctx, r.cut)()
	close(r.drain)
	<-r.pumped
	r.mu.Lock()
	g := r.current
	r.current = nil
	r.mu.Unlock()
	err := g.retire(ctx, false)
	r.retiring.Wait()
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		return fmt.Errorf("event recorder: stop: %w", err)
	}
	return nil
}

// handedOver returns once the broadcaster has distributed every Event
// passed to it, or has distributed none for [settle] (it drops Events its
// watchers have no room for), or with ctx's error.
func (g *generation) handedOver(ctx context.Context) error {
	tick := time.NewTicker(settle / 4)
	defer tick.Stop()
	progressAt, seen := time.Now(), g.seen.Load()
	for seen < g.handed.Load() && time.Since(progressAt) < settle {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
		if n := g.seen.Load(); n != seen {
			progressAt, seen = time.Now(), n
		}
	}
	return nil
}

// Eventf implements ports.EventRecorder without waiting for the API server.
// An empty action takes the reason's value, since the API server rejects an
// Event without one.
func (r *Recorder) Eventf(regarding runtime.Object, eventType, reason, action, note string, args ...any) {
	// The read lock keeps Stop from closing the queue's intake under us.
	r.mu.RLock()
	defer r.mu.RUnlock()
	if !r.running {
		r.dropped.WithLabelValues(DropNotRunning).Inc()
		r.log.Debug("event dropped, recorder not running", zap.String("reason", reason))
		return
	}
	ref, err := reference.GetReference(r.scheme, regarding)
	if err != nil {
		r.dropped.WithLabelValues(DropInvalid).Inc()
		r.log.Error("event dropped, no reference to its object", zap.String("reason", reason), zap.Error(err))
		return
	}
	if eventType != corev1.EventTypeNormal && eventType != corev1.EventTypeWarning {
		r.dropped.WithLabelValues(DropInvalid).Inc()
		r.log.Error("event dropped, unknown type", zap.String("reason", reason), zap.String("type", eventType))
		return
	}
	if action == "" {
		action = reason
	}
	msg := note
	if len(args) > 0 {
		msg = fmt.Sprintf(note, args...)
	}
	// Formatted here, so that a note with a % and no args stays as it is.
	if !r.queue.push(&queued{regarding: ref, eventType: eventType, reason: reason, action: action, note: truncate(msg, maxNoteLength)}) {
		r.dropped.WithLabelValues(DropOverflow).Inc()
		r.log.Debug("event dropped, queue full", zap.String("reason", reason))
	}
}

// Scheme is the scheme used to name the kinds of typed objects.
func (r *Recorder) Scheme() *runtime.Scheme { return r.scheme }

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for len(s) > 0 && !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}

// MaxConcurrentWrites bounds the Event writes in flight. client-go's
// broadcaster starts a goroutine per Event; unbounded, a burst of Events
// reaches the API server at once, beside the writes reconciles wait for.
const MaxConcurrentWrites = 4

// flow is what every broadcaster's sink shares: the write slots, and the
// writes begun, which the queue keeps few.
type flow struct {
	slots  chan struct{} // one per write in flight
	active atomic.Int64  // writes begun (waiting for a slot or writing) and not ended
	began  atomic.Uint64
	moved  chan struct{} // signalled when a write begins or ends
}

func (f *flow) signal() {
	select {
	case f.moved <- struct{}{}:
	default:
	}
}

// wait returns true once ok holds or limit (when not 0) has passed, and
// false when ctx ends first.
func (f *flow) wait(ctx context.Context, limit time.Duration, ok func() bool) bool {
	var expired <-chan time.Time
	if limit > 0 {
		t := time.NewTimer(limit)
		defer t.Stop()
		expired = t.C
	}
	for !ok() {
		select {
		case <-f.moved:
		case <-expired:
			return true
		case <-ctx.Done():
			return false
		}
	}
	return true
}

// sink is the API server as the broadcaster writes to it. It counts the
// Events the API server rejects, and knows when no write is in flight.
type sink struct {
	events.EventSink
	dropped *prometheus.CounterVec
	log     *zap.Logger
	flow    *flow

	inflight atomic.Int64
	calls    atomic.Uint64 // writes begun, so idle sees one that came and went

	mu       sync.Mutex
	retrying map[*eventsv1.Event]bool // Events whose last write failed, which client-go retries
}

// Create, Update and Patch write in a slot and count what client-go
// abandons; a series' create that finds its Event is retried as a patch,
// and a patch that finds it gone as a create.
func (s *sink) Create(ctx context.Context, e *eventsv1.Event) (*eventsv1.Event, error) {
	return s.write(ctx, e, func() (*eventsv1.Event, error) { return s.EventSink.Create(ctx, e) },
		func(err error) bool { return e.Series != nil && apierrors.IsAlreadyExists(err) })
}

func (s *sink) Update(ctx context.Context, e *eventsv1.Event) (*eventsv1.Event, error) {
	return s.write(ctx, e, func() (*eventsv1.Event, error) { return s.EventSink.Update(ctx, e) },
		func(error) bool { return false })
}

func (s *sink) Patch(ctx context.Context, e *eventsv1.Event, data []byte) (*eventsv1.Event, error) {
	return s.write(ctx, e, func() (*eventsv1.Event, error) { return s.EventSink.Patch(ctx, e, data) }, apierrors.IsNotFound)
}

// write runs do once a write slot is free, within ctx, and observes its
// error unless retriedAs says client-go goes on another way.
func (s *sink) write(ctx context.Context, e *eventsv1.Event, do func() (*eventsv1.Event, error), retriedAs func(error) bool) (*eventsv1.Event, error) {
	end, err := s.begin(ctx)
	if err != nil {
		return nil, err
	}
	defer end()
	out, err := do()
	if !retriedAs(err) {
		s.observe(err, e)
	}
	return out, err
}

// begin waits for a write slot, within ctx.
func (s *sink) begin(ctx context.Context) (end func(), err error) {
	f := s.flow
	s.calls.Add(1)
	s.inflight.Add(1)
	f.began.Add(1)
	f.active.Add(1)
	f.signal()
	done := func() {
		s.inflight.Add(-1)
		f.active.Add(-1)
		f.signal()
	}
	select {
	case f.slots <- struct{}{}:
		return func() { <-f.slots; done() }, nil
	case <-ctx.Done():
		done()
		return nil, ctx.Err()
	}
}

// observe counts an Event client-go abandons without a retry: the API
// server refused it, or the request could not be built. It tells them from
// errors worth a retry as client-go does, by the error's type, and keeps
// the Events client-go will retry.
func (s *sink) observe(err error, e *eventsv1.Event) {
	var (
		status    *apierrors.StatusError
		construct *rest.RequestConstructionError
	)
	retry := err != nil && !errors.As(err, &status) && !errors.As(err, &construct)
	s.mu.Lock()
	if retry {
		s.retrying[e] = true // client-go retries the same Event
	} else {
		delete(s.retrying, e)
	}
	s.mu.Unlock()
	if err == nil || retry {
		return
	}
	s.dropped.WithLabelValues(DropRejected).Inc()
	s.log.Info("event rejected", zap.String("reason", e.Reason), zap.String("namespace", e.Namespace), zap.Error(err))
}

func (s *sink) pendingRetries() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.retrying)
}

// idle returns once no write has been in flight or begun for [settle]
// (and, with retries, no Event waits for client-go's retry), or with ctx's
// error.
func (s *sink) idle(ctx context.Context, retries bool) error {
	tick := time.NewTicker(settle / 4)
	defer tick.Stop()
	quietSince, seen := time.Now(), s.calls.Load()
	for {
		if n := s.calls.Load(); n != seen || s.inflight.Load() > 0 {
			quietSince, seen = time.Now(), n
		} else if time.Since(quietSince) >= settle && (!retries || s.pendingRetries() == 0) {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}
