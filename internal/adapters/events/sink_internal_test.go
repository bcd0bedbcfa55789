package events

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zaptest"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	clientevents "k8s.io/client-go/tools/events"

	"github.com/hexagonal-operator/operator/internal/ports"
)

// slowSink is an API server that takes a while per Event, and records the
// most writes it saw at once.
type slowSink struct {
	mu       sync.Mutex
	written  []string
	inflight atomic.Int32
	most     atomic.Int32
}

var _ clientevents.EventSink = (*slowSink)(nil)

func (s *slowSink) write(e *eventsv1.Event) (*eventsv1.Event, error) {
	n := s.inflight.Add(1)
	defer s.inflight.Add(-1)
	for m := s.most.Load(); n > m && !s.most.CompareAndSwap(m, n); m = s.most.Load() {
	}
	time.Sleep(20 * time.Millisecond)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.written = append(s.written, e.Regarding.Name)
	return e, nil
}

func (s *slowSink) Create(_ context.Context, e *eventsv1.Event) (*eventsv1.Event, error) {
	return s.write(e)
}
func (s *slowSink) Update(_ context.Context, e *eventsv1.Event) (*eventsv1.Event, error) {
	return s.write(e)
}
func (s *slowSink) Patch(_ context.Context, e *eventsv1.Event, _ []byte) (*eventsv1.Event, error) {
	return s.write(e)
}

func (s *slowSink) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.written)
}

// A burst of Events reaches the API server a few at a time, and Stop waits
// until every queued one is written: none is lost on a graceful stop.
func TestBurstIsBoundedAndDrainedOnStop(t *testing.T) {
	t.Parallel()
	r, err := New(fake.NewClientset(), Options{MaxConcurrentWrites: 3}, zaptest.NewLogger(t))
	require.NoError(t, err)
	api := &slowSink{}
	r.newSink = func() clientevents.EventSink { return api }
	require.NoError(t, r.Start(context.Background()))

	const n = 60
	for i := range n {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprint("p", i), UID: types.UID(fmt.Sprint("u", i))}}
		r.Eventf(pod, ports.EventTypeNormal, "Burst", "Act", "event %d", i)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, r.Stop(ctx))

	assert.Equal(t, n, api.count(), "every Event recorded before Stop is written")
	assert.Equal(t, int32(3), api.most.Load(), "MaxConcurrentWrites at once, no more")
}
