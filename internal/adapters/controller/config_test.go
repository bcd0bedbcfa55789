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
	"github.com/hexagonal-operator/operator/internal/adapters/controller/predicate"
	"github.com/hexagonal-operator/operator/internal/ports"
)

var rsKind = schema.GroupKind{Group: "apps", Kind: "ReplicaSet"}

func TestConfigValidation(t *testing.T) {
	t.Parallel()
	rec := newRecorder(nil)
	tests := []struct {
		name    string
		build   func(e *env) (*controller.Controller, error)
		wantErr []string // substrings; none means success
	}{
		{"complete", func(e *env) (*controller.Controller, error) {
			return newController("ok", e.deps, 3, rec, forSource(newSource("A")), ownedBy(newSource("B"), rsKind))
		}, nil},
		{"empty name", func(e *env) (*controller.Controller, error) {
			return newController("", e.deps, 1, rec, forSource(newSource("A")))
		}, []string{"name is empty"}},
		{"nothing to watch", func(e *env) (*controller.Controller, error) {
			return newController("x", e.deps, 1, rec)
		}, []string{"nothing to watch"}},
		{"zero workers", func(e *env) (*controller.Controller, error) {
			return newController("x", e.deps, 0, rec, forSource(newSource("A")))
		}, []string{"workers is 0"}},
		{"nil reconciler", func(e *env) (*controller.Controller, error) {
			return newController("x", e.deps, 1, nil, forSource(newSource("A")))
		}, []string{"reconciler is nil"}},
		{"nil source", func(e *env) (*controller.Controller, error) {
			return newController("x", e.deps, 1, rec, forSource(nil))
		}, []string{"source is nil"}},
		{"nil map function", func(e *env) (*controller.Controller, error) {
			return newController("x", e.deps, 1, rec, forSource(newSource("A")), controller.Watch{Source: newSource("B")})
		}, []string{"watch 1: map function is nil"}},
		{"nil predicate", func(e *env) (*controller.Controller, error) {
			return newController("x", e.deps, 1, rec, forSource(newSource("A"), nil))
		}, []string{"a predicate is nil"}},
		{"missing deps, all reported", func(*env) (*controller.Controller, error) {
			return newController("x", controller.Deps{}, 1, rec, forSource(newSource("A")))
		}, []string{"logger is nil", "registerer is nil", "leader elector is nil"}},
		{"negative timeout", func(e *env) (*controller.Controller, error) {
			d := e.deps
			d.Options = controller.Options{ReconcileTimeout: -1}
			return newController("x", d, 1, rec, forSource(newSource("A")))
		}, []string{"reconcile timeout"}},
		{"duplicate name on one registry", func(e *env) (*controller.Controller, error) {
			if _, err := newController("twice", e.deps, 1, rec, forSource(newSource("A"))); err != nil {
				return nil, err
			}
			return newController("twice", e.deps, 1, rec, forSource(newSource("A")))
		}, []string{`"twice" already exists`}},
		{"same name on two registries", func(e *env) (*controller.Controller, error) {
			if _, err := newController("same", e.deps, 1, rec, forSource(newSource("A"))); err != nil {
				return nil, err
			}
			return newController("same", newEnv().deps, 1, rec, forSource(newSource("A")))
		}, nil},
		{"a failed build does not take the name", func(e *env) (*controller.Controller, error) {
			if _, err := newController("retry", e.deps, 0, rec, forSource(newSource("A"))); err == nil {
				return nil, assert.AnError
			}
			return newController("retry", e.deps, 1, rec, forSource(newSource("A")))
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

func TestNewReportsMetricsConflictsAsErrors(t *testing.T) {
	t.Parallel()
	e := newEnv()
	// Someone else took a name the controller needs, with another type.
	require.NoError(t, e.reg.Register(prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "controller_runtime_reconcile_errors_total", Help: "Total number of reconciliation errors per controller",
	})))
	_, err := newController("x", e.deps, 1, newRecorder(nil), forSource(newSource("A")))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"x"`)
}

func TestWatchesFilterAndMap(t *testing.T) {
	t.Parallel()
	e := newEnv()
	replicaSets, pods, configMaps := newSource("ReplicaSet"), newSource("Pod"), newSource("ConfigMap")
	r := newRecorder(nil)
	c, err := newController("replicaset", e.deps, 2, r,
		forSource(replicaSets, predicate.Or(predicate.GenerationChanged(), predicate.LabelChanged())),
		ownedBy(pods, rsKind),
		controller.Watch{Source: configMaps, Map: func(o metav1.Object) []ports.Request {
			return []ports.Request{req(o.GetNamespace(), o.GetLabels()["for"])}
		}, Predicates: []predicate.Predicate{predicate.ObjectFunc(func(o metav1.Object) bool { return o.GetLabels()["for"] != "" })}})
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
