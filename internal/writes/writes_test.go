package writes_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/hexagonal-operator/operator/internal/writes"
)

func TestObserve(t *testing.T) {
	t.Parallel()
	pods := schema.GroupKind{Kind: "Pod"}
	type write struct {
		kind schema.GroupKind
		rv   string
	}
	tests := []struct {
		name     string
		observed bool // the context carries the recording observer
		nilObs   bool // the context carries a nil observer
		rv       string
		want     []write
	}{
		{name: "reported to the observer", observed: true, rv: "7", want: []write{{pods, "7"}}},
		{name: "no resourceVersion, nothing to wait for", observed: true, rv: ""},
		{name: "no observer outside a reconcile", rv: "7"},
		{name: "a nil observer", nilObs: true, rv: "7"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var got []write
			ctx := context.Background()
			switch {
			case tt.observed:
				ctx = writes.WithObserver(ctx, func(kind schema.GroupKind, rv string) { got = append(got, write{kind, rv}) })
			case tt.nilObs:
				ctx = writes.WithObserver(ctx, nil)
			}
			assert.NotPanics(t, func() { writes.Observe(ctx, pods, tt.rv) })
			assert.Equal(t, tt.want, got)
		})
	}
}
