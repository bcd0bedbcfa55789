package events_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/hexagonal-operator/operator/internal/adapters/events"
	"github.com/hexagonal-operator/operator/internal/ports"
	"github.com/hexagonal-operator/operator/test/controlplane"
)

// TestRecorderOnRealAPIServer records Events about a real object and reads
// them back from events.k8s.io/v1, including the series the recorder makes
// of a repeated Event.
func TestRecorderOnRealAPIServer(t *testing.T) {
	t.Parallel()
	cp := controlplane.StartT(t, controlplane.Options{})
	cs := cp.Clientset()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const ns = "events-test"
	require.NoError(t, cp.EnsureNamespace(ctx, ns))
	cm, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "subject"}}, metav1.CreateOptions{})
	require.NoError(t, err)

	r := startRecorder(t, cs, events.Options{})
	r.Eventf(cm, ports.EventTypeNormal, "Labeled", "Label", "set %s", "hello=world")

	regarding := fields.OneTermEqualSelector("regarding.name", "subject").String()
	var got eventsv1.Event
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		list, err := cs.EventsV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: regarding})
		require.NoError(c, err)
		require.Len(c, list.Items, 1)
		got = list.Items[0]
	}, 20*time.Second, 100*time.Millisecond)
	assert.Equal(t, "ConfigMap", got.Regarding.Kind)
	assert.Equal(t, cm.UID, got.Regarding.UID)
	assert.Equal(t, "Labeled", got.Reason)
	assert.Equal(t, "Label", got.Action)
	assert.Equal(t, "set hello=world", got.Note)
	assert.Equal(t, events.DefaultReportingController, got.ReportingController)

	// The same Event again becomes a series on the same object, not a
	// second Event.
	r.Eventf(cm, ports.EventTypeNormal, "Labeled", "Label", "set %s", "hello=world")
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		list, err := cs.EventsV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: regarding})
		require.NoError(c, err)
		require.Len(c, list.Items, 1)
		require.NotNil(c, list.Items[0].Series)
		assert.Equal(c, int32(2), list.Items[0].Series.Count)
		assert.Equal(c, got.Name, list.Items[0].Name)
	}, 20*time.Second, 100*time.Millisecond)

	// Later repeats are counted in memory (client-go writes the count when
	// the series ends); Stop writes no second Event.
	r.Eventf(cm, ports.EventTypeNormal, "Labeled", "Label", "set %s", "hello=world")
	stopCtx, stopCancel := context.WithTimeout(ctx, 10*time.Second)
	defer stopCancel()
	require.NoError(t, r.Stop(stopCtx))
	list, err := cs.EventsV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: regarding})
	require.NoError(t, err)
	require.Len(t, list.Items, 1)
	require.NotNil(t, list.Items[0].Series)
	assert.Equal(t, int32(2), list.Items[0].Series.Count)

	// A cluster-scoped object's Events go to the default namespace.
	r2 := startRecorder(t, cs, events.Options{})
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "no-such-node", UID: "uid-node"}}
	r2.Eventf(node, ports.EventTypeWarning, "Missing", "Look", "gone")
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		list, err := cs.EventsV1().Events(metav1.NamespaceDefault).List(ctx, metav1.ListOptions{
			FieldSelector: fields.OneTermEqualSelector("regarding.name", node.Name).String(),
		})
		require.NoError(c, err)
		require.Len(c, list.Items, 1)
		assert.Equal(c, "Node", list.Items[0].Regarding.Kind)
	}, 20*time.Second, 100*time.Millisecond)
}
