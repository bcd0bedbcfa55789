package events

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"
	"unicode/utf8"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/reference"
	"k8s.io/utils/clock"

	"github.com/hexagonal-operator/operator/internal/kubeclient"
	"github.com/hexagonal-operator/operator/internal/ports"
)

// DefaultReportingController names the operator in every Event's
// reportingController.
const DefaultReportingController = "hexagonal-operator"

// maxNoteLength is the API server's limit on an Event's note; a longer one
// would be rejected and the Event lost.
const maxNoteLength = 1024

// Options configure the [Recorder]. The zero value is ready to use.
type Options struct {
	// ReportingController is written into each Event; empty means
	// DefaultReportingController.
	ReportingController string
	// AddToScheme registers more types (the ChaosPod API) in the
	// recorder's scheme, so Events can refer to typed objects of those
	// kinds. The kinds of kubeclient.Scheme are always registered.
	AddToScheme []func(*runtime.Scheme) error
	// MaxConcurrentWrites caps the Event writes in flight; 0 means
	// DefaultMaxConcurrentWrites. A backlog of reconciles records as many
	// Events as it writes labels, and writing them all at once would take
	// the API server from the writes that converge the cluster. Events
	// wait in a queue of 1000; when it is full, the caller waits for room
	// while the writers make progress (up to 10 s), else the Event is
	// dropped and counted.
	MaxConcurrentWrites int
}

// DefaultMaxConcurrentWrites is the default of Options.MaxConcurrentWrites.
const DefaultMaxConcurrentWrites = 4

// Defaults of the knobs tests turn (see doc.go for the reasons).
const (
	// maxQueuedEvents is client-go's broadcaster's queue length.
	maxQueuedEvents = 1000
	// queueWait is how long Eventf waits for room in a full queue. It
	// makes a backlog that records faster than the writers keep up go at
	// their pace instead of losing Events, and bounds how long a
	// reconcile can be held by an API server that takes no Events.
	queueWait = 10 * time.Second
	// stallAfter is how long the writers may go without finishing a write
	// before a full queue stops holding callers: they are then stuck on
	// the API server, and waiting for them would only slow reconciles.
	stallAfter = 2 * time.Second
	// stallCheck is how often a waiting caller looks at the writers.
	stallCheck = 100 * time.Millisecond
	// sweepEvery is how often finished series are written and evicted: an
	// entry outlives its series by at most this much.
	sweepEvery = 30 * time.Second
	// firstRetryAfter is the pause after the first failed write; it
	// doubles for each further one.
	firstRetryAfter = 500 * time.Millisecond
)

// Recorder records events.k8s.io/v1 Events: it queues them, merges repeats
// into series, and writes them in the background with a few goroutines.
type Recorder struct {
	client     kubeclient.Interface
	scheme     *runtime.Scheme
	controller string
	log        *zap.Logger
	maxWrites  int

	// Tests turn these before Start.
	clock      clock.WithTicker
	queueSize  int
	maxSeries  int
	queueWait  time.Duration
	sweepEvery time.Duration
	retryAfter time.Duration

	dropped dropCounts

	mu      sync.RWMutex // guards what follows
	run     *run         // nil when not running
	started bool
}

var _ ports.EventRecorder = (*Recorder)(nil)

// New returns a recorder that writes through client once started. It builds
// the recorder's own scheme from kubeclient's groups and opts.AddToScheme,
// and does no I/O.
func New(client kubeclient.Interface, opts Options, log *zap.Logger) (*Recorder, error) {
	if client == nil {
		return nil, errors.New("event recorder: a Kubernetes client is required")
	}
	if log == nil {
		log = zap.NewNop()
	}
	scheme := runtime.NewScheme()
	for _, add := range append([]func(*runtime.Scheme) error{kubeclient.AddToScheme}, opts.AddToScheme...) {
		if add == nil {
			continue
		}
		if err := add(scheme); err != nil {
			return nil, fmt.Errorf("event recorder: build scheme: %w", err)
		}
	}
	controller := opts.ReportingController
	if controller == "" {
		controller = DefaultReportingController
	}
	maxWrites := opts.MaxConcurrentWrites
	if maxWrites <= 0 {
		maxWrites = DefaultMaxConcurrentWrites
	}
	return &Recorder{
		client:     client,
		scheme:     scheme,
		controller: controller,
		log:        log,
		maxWrites:  maxWrites,
		clock:      clock.RealClock{},
		queueSize:  maxQueuedEvents,
		maxSeries:  maxSeries,
		queueWait:  queueWait,
		sweepEvery: sweepEvery,
		retryAfter: firstRetryAfter,
	}, nil
}

// Start begins sending Events to the API server. The reporting instance is
// client-go's "<controller>-<hostname>"; in a Pod the hostname is the
// Pod's name. A recorder starts once.
func (r *Recorder) Start(context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.started {
		return errors.New("event recorder: already started")
	}
	hostname, _ := os.Hostname()
	r.run = startRun(r, r.controller+"-"+hostname)
	r.started = true
	return nil
}

// Stop writes what is queued, and the counts of series not yet written,
// and waits for those writes within ctx; when ctx ends first, the writes
// left are abandoned and Stop returns ctx's error. Events recorded after
// Stop are dropped.
func (r *Recorder) Stop(ctx context.Context) error {
	r.mu.Lock()
	run := r.run
	r.run = nil
	r.mu.Unlock()
	if run == nil {
		return nil
	}
	if err := run.stop(ctx); err != nil {
		return fmt.Errorf("event recorder: stop: %w", err)
	}
	return nil
}

// Eventf implements ports.EventRecorder. It does not wait for the API
// server: the Event is queued and written in the background. When the
// queue is full it waits for room while the writers make progress (up to
// 10 s) and otherwise drops the Event (counted, with a debug line), as it
// drops one when the recorder is not running. An
// empty action takes the reason's value, since the API server rejects an
// Event without one.
func (r *Recorder) Eventf(regarding runtime.Object, eventType, reason, action, note string, args ...any) {
	// The read lock keeps Stop from closing the queue under us.
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.run == nil {
		r.dropped.add(DropNotRunning)
		r.log.Debug("event dropped, recorder not running", zap.String("reason", reason))
		return
	}
	if action == "" {
		action = reason
	}
	msg := note
	if len(args) > 0 {
		msg = fmt.Sprintf(note, args...)
	}
	ref, err := reference.GetReference(r.scheme, regarding)
	if err != nil {
		r.dropped.add(DropInvalid)
		r.log.Error("event dropped, no reference to its object", zap.String("reason", reason), zap.Error(err))
		return
	}
	if eventType != corev1.EventTypeNormal && eventType != corev1.EventTypeWarning {
		r.dropped.add(DropInvalid)
		r.log.Error("event dropped, unknown type", zap.String("reason", reason), zap.String("type", eventType))
		return
	}
	r.run.observe(seriesKey{
		regarding: *ref,
		eventType: eventType,
		reason:    reason,
		action:    action,
		note:      truncate(msg, maxNoteLength),
	})
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
