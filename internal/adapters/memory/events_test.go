package memory_test

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/hexagonal-operator/operator/internal/adapters/memory"
	"github.com/hexagonal-operator/operator/internal/ports"
)

func TestEventRecorder(t *testing.T) {
	t.Parallel()
	r := memory.NewEventRecorder()
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web"}}
	chaos := &unstructured.Unstructured{}
	chaos.SetAPIVersion("chaosapps.metamagical.io/v1")
	chaos.SetKind("ChaosPod")
	chaos.SetNamespace("ns")
	chaos.SetName("monkey")

	r.Eventf(rs, ports.EventTypeNormal, "Labeled", "Label", "set %s=%s", "hello", "world")
	r.Eventf(chaos, ports.EventTypeNormal, "PodStopped", "Delete", "gone")
	r.Eventf(rs, ports.EventTypeWarning, "Failed", "Label", "again")

	assert.Equal(t, []memory.Event{
		{Kind: "ReplicaSet", Regarding: types.NamespacedName{Namespace: "ns", Name: "web"}, Type: "Normal", Reason: "Labeled", Action: "Label", Note: "set hello=world"},
		{Kind: "ChaosPod", Regarding: types.NamespacedName{Namespace: "ns", Name: "monkey"}, Type: "Normal", Reason: "PodStopped", Action: "Delete", Note: "gone"},
		{Kind: "ReplicaSet", Regarding: types.NamespacedName{Namespace: "ns", Name: "web"}, Type: "Warning", Reason: "Failed", Action: "Label", Note: "again"},
	}, r.Events())
	assert.Equal(t, []string{"Labeled", "PodStopped", "Failed"}, r.Reasons())
	assert.Len(t, r.EventsFor(types.NamespacedName{Namespace: "ns", Name: "web"}), 2)
	assert.Empty(t, r.EventsFor(types.NamespacedName{Namespace: "ns", Name: "absent"}))

	// Events hands out a copy.
	got := r.Events()
	got[0].Reason = "Changed"
	assert.Equal(t, "Labeled", r.Events()[0].Reason)
}

func TestEventRecorderConcurrentUse(t *testing.T) {
	t.Parallel()
	r := memory.NewEventRecorder()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"}}
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			r.Eventf(pod, ports.EventTypeNormal, "Created", "Create", "")
			_ = r.Events()
		})
	}
	wg.Wait()
	assert.Len(t, r.Events(), 20)
	assert.Equal(t, "Pod", r.Events()[0].Kind)
}
