package app_test

import (
	"context"
	"fmt"
	"time"

	"go.uber.org/fx"
	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	chaosv1 "github.com/hexagonal-operator/operator/api/chaos/v1"
	"github.com/hexagonal-operator/operator/internal/adapters/memory"
	"github.com/hexagonal-operator/operator/internal/adapters/webhook"
	"github.com/hexagonal-operator/operator/internal/app"
	"github.com/hexagonal-operator/operator/internal/config"
	"github.com/hexagonal-operator/operator/internal/ports"
)

// The whole operator, composed as the binary composes it, with one adapter
// replaced: the wall clock by a memory.Clock that stands still. Overrides
// passed to app.New come after the defaults, so fx.Replace (or fx.Decorate)
// there wins everywhere in the graph, the domain included. Building the
// graph does no I/O, so no cluster is needed until Start; with a control
// plane, test/integration starts the same app. docs/testing.md walks
// through this recipe.
func ExampleNew() {
	cfg, err := config.Parse([]string{"--kubeconfig=testdata/kubeconfig"}, func(string) string { return "" })
	if err != nil {
		fmt.Println("config:", err)
		return
	}
	now := time.Date(2030, time.January, 2, 3, 4, 5, 0, time.UTC)
	clock := memory.NewClock(now)

	var (
		got   ports.Clock
		table struct {
			fx.In
			Hooks []webhook.Hook `group:"webhooks"`
		}
	)
	a := app.New(cfg,
		// fx.As: the graph holds a ports.Clock, not a *memory.Clock.
		fx.Replace(fx.Annotate(clock, fx.As(new(ports.Clock)))),
		fx.Populate(&got, &table),
	)
	if err := a.Err(); err != nil {
		fmt.Println("app:", err)
		return
	}
	fmt.Println("the app's clock is the memory clock:", got == ports.Clock(clock))

	// The ChaosPod v1 defaulting webhook's rule was built with it: an
	// unset nextStop becomes the pinned "now" plus one minute.
	for _, h := range table.Hooks {
		if h.Path != app.ChaosPodV1MutatePath {
			continue
		}
		resp := h.Admitter.Admit(context.Background(), &admissionv1.AdmissionRequest{
			Kind:      metav1.GroupVersionKind{Group: chaosv1.GroupName, Version: "v1", Kind: chaosv1.Kind},
			Resource:  metav1.GroupVersionResource{Group: chaosv1.GroupName, Version: "v1", Resource: chaosv1.Resource},
			Operation: admissionv1.Create,
			Object:    runtime.RawExtension{Raw: []byte(`{"metadata":{"namespace":"default","name":"chaos"},"spec":{}}`)},
		})
		fmt.Println("patch:", string(resp.Patch))
	}
	// Output:
	// the app's clock is the memory clock: true
	// patch: [{"op":"add","path":"/spec/nextStop","value":"2030-01-02T03:05:05Z"}]
}
