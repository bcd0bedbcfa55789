package controller_test

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/hexagonal-operator/operator/internal/adapters/controller"
	"github.com/hexagonal-operator/operator/internal/adapters/controller/handler"
	"github.com/hexagonal-operator/operator/internal/adapters/controller/predicate"
	"github.com/hexagonal-operator/operator/internal/ports"
)

var rsKind = schema.GroupKind{Group: "apps", Kind: "ReplicaSet"}

func TestBuilderValidation(t *testing.T) {
	t.Parallel()
	rec := newRecorder(nil)
	tests := []struct {
		name    string
		build   func(e *env) (*controller.Controller, error)
		wantErr []string // substrings; none means success
	}{
		{"complete", func(e *env) (*controller.Controller, error) {
			return controller.NewBuilder("ok", e.deps).For(newSource("A")).Owns(newSource("B"), rsKind).Workers(3).Complete(rec)
		}, nil},
		{"empty name", func(e *env) (*controller.Controller, error) {
			return controller.NewBuilder("", e.deps).For(newSource("A")).Complete(rec)
		}, []string{"name is empty"}},
		{"no For", func(e *env) (*controller.Controller, error) {
			return controller.NewBuilder("x", e.deps).Owns(newSource("B"), rsKind).Complete(rec)
		}, []string{"For was not called"}},
		{"For twice", func(e *env) (*controller.Controller, error) {
			return controller.NewBuilder("x", e.deps).For(newSource("A")).For(newSource("B")).Complete(rec)
		}, []string{"For called more than once"}},
		{"zero workers", func(e *env) (*controller.Controller, error) {
			return controller.NewBuilder("x", e.deps).For(newSource("A")).Workers(0).Complete(rec)
		}, []string{"workers is 0"}},
		{"nil reconciler", func(e *env) (*controller.Controller, error) {
			return controller.NewBuilder("x", e.deps).For(newSource("A")).Complete(nil)
		}, []string{"reconciler is nil"}},
		{"nil source", func(e *env) (*controller.Controller, error) {
			return controller.NewBuilder("x", e.deps).For(nil).Complete(rec)
		}, []string{"source is nil"}},
		{"nil mapper", func(e *env) (*controller.Controller, error) {
			return controller.NewBuilder("x", e.deps).For(newSource("A")).Watches(newSource("B"), nil).Complete(rec)
		}, []string{"watch 1: mapper is nil"}},
		{"nil predicate", func(e *env) (*controller.Controller, error) {
			return controller.NewBuilder("x", e.deps).For(newSource("A"), nil).Complete(rec)
		}, []string{"a predicate is nil"}},
		{"owner without kind", func(e *env) (*controller.Controller, error) {
			return controller.NewBuilder("x", e.deps).For(newSource("A")).Owns(newSource("B"), schema.GroupKind{Group: "apps"}).Complete(rec)
		}, []string{"owner kind is empty"}},
		{"missing deps, all reported", func(*env) (*controller.Controller, error) {
			return controller.NewBuilder("x", controller.Deps{}).For(newSource("A")).Complete(rec)
		}, []string{"logger is nil", "registerer is nil", "leader elector is nil"}},
		{"negative timeout", func(e *env) (*controller.Controller, error) {
			return controller.NewBuilder("x", e.deps).For(newSource("A")).
				WithOptions(controller.Options{ReconcileTimeout: -1}).Complete(rec)
		}, []string{"reconcile timeout"}},
		{"duplicate name on one registry", func(e *env) (*controller.Controller, error) {
			if _, err := controller.NewBuilder("twice", e.deps).For(newSource("A")).Complete(rec); err != nil {
				return nil, err
			}
			return controller.NewBuilder("twice", e.deps).For(newSource("A")).Complete(rec)
		}, []string{`"twice" already exists`}},
		{"same name on two registries", func(e *env) (*controller.Controller, error) {
			if _, err := controller.NewBuilder("same", e.deps).For(newSource("A")).Complete(rec); err != nil {
				return nil, err
			}
			return controller.NewBuilder("same", newEnv().deps).For(newSource("A")).Complete(rec)
		}, nil},
		{"a failed build does not take the name", func(e *env) (*controller.Controller, error) {
			if _, err := controller.NewBuilder("retry", e.deps).For(newSource("A")).Workers(0).Complete(rec); err == nil {
				return nil, assert.AnError
			}
			return controller.NewBuilder("retry", e.deps).For(newSource("A")).Complete(rec)
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := tt.build(newEnv())
			if len(tt.wantErr) == 0 {
				require.NoError(t, err)
				require.NotNil(t, c)
				return
			}
			require.Error(t, err)
			assert.Nil(t, c)
			for _, want := range tt.wantErr {
				assert.ErrorContains(t, err, want)
			}
		})
	}
}

func TestBuilderRegistersMetricsConflictsAsErrors(t *testing.T) {
	t.Parallel()
	e := newEnv()
	// Someone else took a name the controller needs, with another type.
	require.NoError(t, e.reg.Register(prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "controller_runtime_reconcile_errors_total", Help: "Total number of reconciliation errors per controller",
	})))
	_, err := controller.NewBuilder("x", e.deps).For(newSource("A")).Complete(newRecorder(nil))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"x"`)
}

func TestBuilderWiresWatches(t *testing.T) {
	t.Parallel()
	e := newEnv()
	replicaSets, pods, configMaps := newSource("ReplicaSet"), newSource("Pod"), newSource("ConfigMap")
	r := newRecorder(nil)
	c, err := controller.NewBuilder("replicaset", e.deps).
		For(replicaSets, predicate.Or(predicate.GenerationChanged(), predicate.LabelChanged())).
		Owns(pods, rsKind).
		Watches(configMaps, handler.MapFunc(func(o metav1.Object) []ports.Request {
			return []ports.Request{req(o.GetNamespace(), o.GetLabels()["for"])}
		}), predicate.ObjectFunc(func(o metav1.Object) bool { return o.GetLabels()["for"] != "" })).
		Workers(2).
		Complete(r)
	require.NoError(t, err)
	start(t, c)

	rs := func(name string, gen int64, labels map[string]string) *metav1.ObjectMeta {
		return &metav1.ObjectMeta{Namespace: "ns", Name: name, Generation: gen, Labels: labels}
	}
	pod := func(name, owner string) *metav1.ObjectMeta {
		return &metav1.ObjectMeta{Namespace: "ns", Name: name, OwnerReferences: []metav1.OwnerReference{{
			APIVersion: "apps/v1", Kind: "ReplicaSet", Name: owner, UID: "u", Controller: ptr.To(true),
		}}}
	}

	replicaSets.update(rs("status-only", 1, nil), rs("status-only", 1, nil)) // dropped by the predicates
	replicaSets.update(rs("relabeled", 1, nil), rs("relabeled", 1, map[string]string{"a": "b"}))
	replicaSets.add(rs("created", 1, nil))
	pods.add(pod("p1", "owner-of-pod"))
	pods.add(&metav1.ObjectMeta{Namespace: "ns", Name: "orphan"}) // no owner: nothing
	configMaps.add(&metav1.ObjectMeta{Namespace: "ns", Name: "cm", Labels: map[string]string{"for": "mapped"}})
	configMaps.add(&metav1.ObjectMeta{Namespace: "ns", Name: "cm2"}) // filtered out

	want := []ports.Request{req("ns", "created"), req("ns", "mapped"), req("ns", "owner-of-pod"), req("ns", "relabeled")}
	require.Eventually(t, func() bool { return r.total() == len(want) }, waitFor, tick)
	assert.Equal(t, want, r.requests())
	assert.Equal(t, float64(len(want)), metric(t, e.reg, "workqueue_adds_total", "name", "replicaset"),
		"filtered events never reach the queue")
	assert.Equal(t, 2.0, metric(t, e.reg, "controller_runtime_max_concurrent_reconciles", "controller", "replicaset"))
}
