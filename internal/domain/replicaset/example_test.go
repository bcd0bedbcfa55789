package replicaset_test

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/hexagonal-operator/operator/internal/adapters/memory"
	"github.com/hexagonal-operator/operator/internal/domain/replicaset"
	"github.com/hexagonal-operator/operator/internal/ports"
)

// The reconciler runs on the in-memory twins of its ports, with no API
// server: one memory.Store is both the reader (the cache's role, metadata only) and the
// writer (the client's role), and memory.EventRecorder keeps the
// Events so they can be printed. docs/testing.md walks through this recipe.
func ExampleReconciler_Reconcile() {
	ctx := context.Background()
	key := types.NamespacedName{Namespace: "shop", Name: "web"}

	store := memory.NewStore[*appsv1.ReplicaSet](appsv1.SchemeGroupVersion.WithKind("ReplicaSet").GroupKind())
	events := memory.NewEventRecorder()
	// Create acts as "someone else" writing to the cluster.
	if _, err := store.Create(ctx, &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{
		Namespace: key.Namespace, Name: key.Name, Labels: map[string]string{"app": "web"},
	}}); err != nil {
		fmt.Println("create:", err)
		return
	}

	r, err := replicaset.New(store.Metadata(), store, events)
	if err != nil {
		fmt.Println("new:", err)
		return
	}
	// A second reconcile finds the label in place: level-based, it writes
	// nothing and records no second Event.
	for range 2 {
		if _, err := r.Reconcile(ctx, ports.Request{NamespacedName: key}); err != nil {
			fmt.Println("reconcile:", err)
			return
		}
	}

	got, err := store.Get(ctx, key)
	if err != nil {
		fmt.Println("get:", err)
		return
	}
	fmt.Printf("labels: app=%s %s=%s\n", got.Labels["app"], replicaset.LabelKey, got.Labels[replicaset.LabelKey])
	for _, e := range events.Events() {
		fmt.Printf("event: %s %s %s/%s %q\n", e.Type, e.Reason, e.Kind, e.Regarding, e.Note)
	}
	// Output:
	// labels: app=web hello=world
	// event: Normal Labeled ReplicaSet/shop/web "Set label hello=world"
}
