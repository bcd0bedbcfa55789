package replicaset_test

import (
	"context"
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/hexagonal-operator/operator/internal/adapters/memory"
	"github.com/hexagonal-operator/operator/internal/domain/replicaset"
	"github.com/hexagonal-operator/operator/internal/ports"
)

// BenchmarkReconcile is the domain's own cost per reconcile, on the
// in-memory adapters: "needs-label" reads, patches and records an Event;
// "labeled" reads and writes nothing, which is what most reconciles of a
// settled cluster do.
func BenchmarkReconcile(b *testing.B) {
	for _, tc := range []struct {
		name   string
		labels map[string]string
	}{
		{"needs-label", map[string]string{"app": "web"}},
		{"labeled", map[string]string{"app": "web", replicaset.LabelKey: replicaset.LabelValue}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			store := memory.NewStore[*appsv1.ReplicaSet](appsv1.SchemeGroupVersion.WithKind("ReplicaSet").GroupKind())
			r, err := replicaset.New(store.Metadata(), store, memory.NewEventRecorder())
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			keys := make([]types.NamespacedName, b.N)
			for i := range keys {
				keys[i] = types.NamespacedName{Namespace: "shop", Name: fmt.Sprintf("web-%d", i)}
				if _, err := store.Create(ctx, &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{
					Namespace: keys[i].Namespace, Name: keys[i].Name, Labels: tc.labels,
				}}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				if _, err := r.Reconcile(ctx, ports.Request{NamespacedName: keys[i]}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
