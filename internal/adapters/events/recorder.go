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
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	clientevents "k8s.io/client-go/tools/events"
	"k8s.io/client-go/tools/reference"

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
	// kinds. Built-in kinds are always registered.
	AddToScheme []func(*runtime.Scheme) error
	// MaxConcurrentWrites caps the Event writes in flight; 0 means
	// DefaultMaxConcurrentWrites. client-go's broadcaster writes each Event
	// from a goroutine of its own, so a backlog of reconciles fires as many
	// Event POSTs at once as labels, and they take the API server from the
	// writes that converge the cluster. Queued Events wait; none is dropped.
	MaxConcurrentWrites int
}

// DefaultMaxConcurrentWrites is the default of Options.MaxConcurrentWrites.
const DefaultMaxConcurrentWrites = 4

// Recorder records events.k8s.io/v1 Events through client-go's event
// broadcaster, which aggregates repeats into series and retries failed
// writes in the background.
type Recorder struct {
	client     kubernetes.Interface
	scheme     *runtime.Scheme
	controller string
	log        *zap.Logger
	maxWrites  int
	// newSink is where Events go; tests replace the API server's.
	newSink func() clientevents.EventSink

	mu          sync.RWMutex // guards what follows
	sink        *boundedSink
	broadcaster clientevents.EventBroadcaster
	queue       enqueuer // the running broadcaster; nil when not running
	instance    string   // reportingInstance, as client-go names it
	cancel      context.CancelFunc
}

var _ ports.EventRecorder = (*Recorder)(nil)

// New returns a recorder that writes through client once started. It builds
// the recorder's own scheme (never client-go's global one) and does no I/O.
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
	controller := opts.ReportingController
	if controller == "" {
		controller = DefaultReportingController
	}
	maxWrites := opts.MaxConcurrentWrites
	if maxWrites <= 0 {
		maxWrites = DefaultMaxConcurrentWrites
	}
	r := &Recorder{client: client, scheme: scheme, controller: controller, log: log, maxWrites: maxWrites}
	r.newSink = func() clientevents.EventSink { return &clientevents.EventSinkImpl{Interface: client.EventsV1()} }
	return r, nil
}

// Start begins sending Events to the API server. The reporting instance is
// client-go's "<controller>-<hostname>"; in a Pod the hostname is the
// Pod's name.
func (r *Recorder) Start(context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.broadcaster != nil {
		return errors.New("event recorder: already started")
	}
	// Not the start context: that one ends when the application has
	// started, and recording goes on until Stop.
	ctx, cancel := context.WithCancel(context.Background())
	sink := newBoundedSink(r.newSink(), r.maxWrites)
	b := clientevents.NewBroadcaster(sink)
	if err := b.StartRecordingToSinkWithContext(ctx); err != nil {
		cancel()
		b.Shutdown()
		return fmt.Errorf("event recorder: start: %w", err)
	}
	q, ok := b.(enqueuer)
	if !ok {
		cancel()
		b.Shutdown()
		return fmt.Errorf("event recorder: start: client-go's broadcaster %T no longer takes Events synchronously", b)
	}
	hostname, _ := os.Hostname()
	r.broadcaster, r.cancel, r.sink = b, cancel, sink
	r.queue, r.instance = q, r.controller+"-"+hostname
	return nil
}

// Stop hands the queued Events to the sink and waits, within ctx, until
// the sink has written them; writes still in flight are abandoned when ctx
// ends. Events recorded after Stop are dropped.
func (r *Recorder) Stop(ctx context.Context) error {
	r.mu.Lock()
	b, cancel, sink := r.broadcaster, r.cancel, r.sink
	r.queue = nil
	r.mu.Unlock()
	if b == nil {
		return nil
	}
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		// Shutdown hands what is queued to the writing goroutines; the
		// sink then tells when they are done.
		b.Shutdown()
		sink.waitIdle(ctx)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("event recorder: stop: %w", ctx.Err())
	}
}

// Eventf implements ports.EventRecorder. It never blocks on the API server:
// the Event is queued and written in the background, or dropped (with a
// debug line) when the recorder is not running. An empty action takes the
// reason's value, since the API server rejects an Event without one.
func (r *Recorder) Eventf(regarding runtime.Object, eventType, reason, action, note string, args ...any) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.queue == nil {
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
	r.enqueue(regarding, eventType, reason, action, truncate(msg, maxNoteLength))
}

// enqueuer is the part of client-go's broadcaster that takes an Event
// synchronously; client-go's own recorder hands each Event over from a
// goroutine of its own, which a Stop cannot wait for.
type enqueuer interface {
	Action(action watch.EventType, obj runtime.Object) error
}

// enqueue builds the Event as client-go's recorder does and queues it
// before it returns, so that Stop sees it. The broadcaster's queue only
// hands Events to writing goroutines, so this waits for no API server.
func (r *Recorder) enqueue(regarding runtime.Object, eventType, reason, action, note string) {
	ref, err := reference.GetReference(r.scheme, regarding)
	if err != nil {
		r.log.Error("event dropped, no reference to its object", zap.String("reason", reason), zap.Error(err))
		return
	}
	if eventType != corev1.EventTypeNormal && eventType != corev1.EventTypeWarning {
		r.log.Error("event dropped, unknown type", zap.String("reason", reason), zap.String("type", eventType))
		return
	}
	now := time.Now()
	namespace := ref.Namespace
	if namespace == "" {
		namespace = metav1.NamespaceDefault
	}
	ev := &eventsv1.Event{
		ObjectMeta:          metav1.ObjectMeta{Name: fmt.Sprintf("%v.%x", ref.Name, now.UnixNano()), Namespace: namespace},
		EventTime:           metav1.NewMicroTime(now),
		ReportingController: r.controller,
		ReportingInstance:   r.instance,
		Action:              action,
		Reason:              reason,
		Regarding:           *ref,
		Note:                note,
		Type:                eventType,
	}
	if err := r.queue.Action(watch.Added, ev); err != nil {
		r.log.Debug("event dropped, recorder stopping", zap.String("reason", reason), zap.Error(err))
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
