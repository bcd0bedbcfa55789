package events

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"unicode/utf8"

	"go.uber.org/zap"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	clientevents "k8s.io/client-go/tools/events"

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
}

// Recorder records events.k8s.io/v1 Events through client-go's event
// broadcaster, which aggregates repeats into series and retries failed
// writes in the background.
type Recorder struct {
	client     kubernetes.Interface
	scheme     *runtime.Scheme
	controller string
	log        *zap.Logger

	mu          sync.RWMutex // guards what follows
	broadcaster clientevents.EventBroadcaster
	recorder    clientevents.EventRecorder
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
	return &Recorder{client: client, scheme: scheme, controller: controller, log: log}, nil
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
	b := clientevents.NewBroadcaster(&clientevents.EventSinkImpl{Interface: r.client.EventsV1()})
	if err := b.StartRecordingToSinkWithContext(ctx); err != nil {
		cancel()
		b.Shutdown()
		return fmt.Errorf("event recorder: start: %w", err)
	}
	r.broadcaster, r.cancel = b, cancel
	r.recorder = b.NewRecorder(r.scheme, r.controller)
	return nil
}

// Stop hands the queued Events to the sink and stops recording; writes
// still in flight are abandoned when ctx ends. Events recorded after Stop
// are dropped.
func (r *Recorder) Stop(ctx context.Context) error {
	r.mu.Lock()
	b, cancel := r.broadcaster, r.cancel
	r.recorder = nil
	r.mu.Unlock()
	if b == nil {
		return nil
	}
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		b.Shutdown()
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
	if r.recorder == nil {
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
	// Already formatted: "%" in the message must reach the API server as is.
	r.recorder.Eventf(regarding, nil, eventType, reason, action, "%s", truncate(msg, maxNoteLength))
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
