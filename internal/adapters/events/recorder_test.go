package events_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/fx"
	"go.uber.org/fx/fxtest"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/hexagonal-operator/operator/internal/adapters/events"
	"github.com/hexagonal-operator/operator/internal/ports"
)

func startRecorder(t *testing.T, cs kubernetes.Interface, opts events.Options) *events.Recorder {
	t.Helper()
	r, err := events.New(cs, opts, zaptest.NewLogger(t))
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

func pod(namespace, name string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, UID: types.UID("uid-" + name)}}
}

func TestRecorderWritesEvents(t *testing.T) {
	t.Parallel()
	cs := fake.NewClientset()
	r := startRecorder(t, cs, events.Options{})

	r.Eventf(pod("ns", "web"), ports.EventTypeNormal, "Labeled", "Label", "set %s=%s", "hello", "world")
	e := waitEvents(t, cs, "ns", 1)[0]
	assert.Equal(t, "Pod", e.Regarding.Kind, "kind comes from the scheme for typed objects")
	assert.Equal(t, "v1", e.Regarding.APIVersion)
	assert.Equal(t, "web", e.Regarding.Name)
	assert.Equal(t, "ns", e.Regarding.Namespace)
	assert.Equal(t, ports.EventTypeNormal, e.Type)
	assert.Equal(t, "Labeled", e.Reason)
	assert.Equal(t, "Label", e.Action)
	assert.Equal(t, "set hello=world", e.Note)
	assert.Equal(t, events.DefaultReportingController, e.ReportingController)
	assert.Contains(t, e.ReportingInstance, events.DefaultReportingController+"-")
}

func TestRecorderNoteAndAction(t *testing.T) {
	t.Parallel()
	long := make([]byte, 2000)
	for i := range long {
		long[i] = 'x'
	}
	tests := []struct {
		name               string
		action, note       string
		args               []any
		wantAction, wantNt string
	}{
		{"percent without args is kept", "Stop", "100% done", nil, "Stop", "100% done"},
		{"empty action takes the reason", "", "note", nil, "Reason", "note"},
		{"long note is cut to the API limit", "Stop", string(long), nil, "Stop", string(long[:1024])},
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
	r.Eventf(pod("ns", "during"), ports.EventTypeNormal, "OnTime", "Act", "while running")
	waitEvents(t, cs, "ns", 1)
	r.Eventf(pod("ns", "during"), ports.EventTypeNormal, "AlsoOnTime", "Act", "while running")
	var reasons []string
	for _, e := range waitEvents(t, cs, "ns", 2) {
		reasons = append(reasons, e.Reason)
	}
	assert.ElementsMatch(t, []string{"OnTime", "AlsoOnTime"}, reasons, "an event from before Start was written")
	require.NoError(t, r.Stop(context.Background()))
	// After Stop: dropped, and above all no panic on a stopped broadcaster.
	r.Eventf(pod("ns", "after"), ports.EventTypeNormal, "Late", "Act", "after stop")
	require.NoError(t, r.Stop(context.Background()))
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
	r := startRecorder(t, cs, events.Options{AddToScheme: []func(*runtime.Scheme) error{addThing}})
	assert.True(t, r.Scheme().Recognizes(thingGV.WithKind("ChaosPod")))
	assert.False(t, r.Scheme().Recognizes(corev1.SchemeGroupVersion.WithKind("Nonsense")))

	r.Eventf(&thing{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "chaos"}}, ports.EventTypeNormal, "PodCreated", "Create", "created")
	e := waitEvents(t, cs, "ns", 1)[0]
	assert.Equal(t, "ChaosPod", e.Regarding.Kind)
	assert.Equal(t, thingGV.String(), e.Regarding.APIVersion)
}

func TestRecorderNeverBlocks(t *testing.T) {
	t.Parallel()
	cs := fake.NewClientset()
	release := make(chan struct{})
	cs.PrependReactor("create", "events", func(k8stesting.Action) (bool, runtime.Object, error) {
		<-release // an API server that does not answer
		return false, nil, nil
	})
	r := startRecorder(t, cs, events.Options{})
	t.Cleanup(func() { close(release) })

	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 2000 {
			r.Eventf(pod("ns", "p"), ports.EventTypeNormal, "Flood", "Act", "event %d", i)
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Eventf blocked on a stuck API server")
	}
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
	app := fxtest.New(t,
		events.Module,
		fx.Supply(fx.Annotate(cs, fx.As(new(kubernetes.Interface))), zap.NewNop()),
		fx.Provide(fx.Annotate(func() func(*runtime.Scheme) error { return addThing }, fx.ResultTags(`group:"event-schemes"`))),
		fx.Populate(&rec, &r),
	)
	app.RequireStart()
	defer app.RequireStop()
	assert.True(t, r.Scheme().Recognizes(thingGV.WithKind("ChaosPod")))
	rec.Eventf(pod("ns", "p"), ports.EventTypeNormal, "Labeled", "Label", "via fx")
	waitEvents(t, cs, "ns", 1)
}
