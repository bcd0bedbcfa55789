package predicate_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hexagonal-operator/operator/internal/adapters/controller/predicate"
)

type event int

const (
	create event = iota
	update
	del
)

func (e event) String() string { return [...]string{"create", "update", "delete"}[e] }

func obj(mutate func(*metav1.ObjectMeta)) metav1.Object {
	m := &metav1.ObjectMeta{
		Namespace: "ns", Name: "a", Generation: 1, ResourceVersion: "10",
		Labels:      map[string]string{"app": "x"},
		Annotations: map[string]string{"note": "y"},
	}
	if mutate != nil {
		mutate(m)
	}
	return m
}

func ask(p predicate.Predicate, e event, oldObj, newObj metav1.Object) bool {
	switch e {
	case create:
		return p.Create(newObj)
	case update:
		return p.Update(oldObj, newObj)
	default:
		return p.Delete(oldObj)
	}
}

var (
	same      = obj(nil)
	bumpedGen = obj(func(m *metav1.ObjectMeta) { m.Generation = 2; m.ResourceVersion = "11" })
	newRV     = obj(func(m *metav1.ObjectMeta) { m.ResourceVersion = "11" })
	relabeled = obj(func(m *metav1.ObjectMeta) { m.Labels = map[string]string{"app": "z"} })
	noLabels  = obj(func(m *metav1.ObjectMeta) { m.Labels = nil })
	emptyLbls = obj(func(m *metav1.ObjectMeta) { m.Labels = map[string]string{} })
	inNsB     = obj(func(m *metav1.ObjectMeta) { m.Namespace = "b" })

	always = predicate.Funcs{}
	never  = predicate.Funcs{
		CreateFunc: func(metav1.Object) bool { return false },
		UpdateFunc: func(_, _ metav1.Object) bool { return false },
		DeleteFunc: func(metav1.Object) bool { return false },
	}
)

func TestPredicates(t *testing.T) {
	t.Parallel()
	inNs := predicate.ObjectFunc(func(o metav1.Object) bool { return o.GetNamespace() == "ns" })
	tests := []struct {
		name   string
		p      predicate.Predicate
		e      event
		oldObj metav1.Object
		newObj metav1.Object
		want   bool
	}{
		{"generation: create passes", predicate.GenerationChanged(), create, nil, same, true},
		{"generation: delete passes", predicate.GenerationChanged(), del, same, nil, true},
		{"generation: bumped passes", predicate.GenerationChanged(), update, same, bumpedGen, true},
		{"generation: status-only write dropped", predicate.GenerationChanged(), update, same, newRV, false},
		{"generation: missing old object dropped", predicate.GenerationChanged(), update, nil, bumpedGen, false},
		{"generation: missing new object dropped", predicate.GenerationChanged(), update, same, nil, false},

		{"labels: create passes", predicate.LabelChanged(), create, nil, same, true},
		{"labels: delete passes", predicate.LabelChanged(), del, same, nil, true},
		{"labels: changed passes", predicate.LabelChanged(), update, same, relabeled, true},
		{"labels: removed passes", predicate.LabelChanged(), update, same, noLabels, true},
		{"labels: generation bump only dropped", predicate.LabelChanged(), update, same, bumpedGen, false},
		{"labels: nil and empty are equal", predicate.LabelChanged(), update, noLabels, emptyLbls, false},

		{"and: none passes", predicate.And(), update, same, same, true},
		{"and: all pass", predicate.And(always, predicate.LabelChanged()), update, same, relabeled, true},
		{"and: one fails", predicate.And(predicate.GenerationChanged(), predicate.LabelChanged()), update, same, relabeled, false},
		{"and: create with a failing member", predicate.And(always, never), create, nil, same, false},
		{"and: delete with all passing", predicate.And(always, always), del, same, nil, true},

		{"or: none drops", predicate.Or(), update, same, bumpedGen, false},
		{"or: one passes", predicate.Or(predicate.GenerationChanged(), predicate.LabelChanged()), update, same, relabeled, true},
		{"or: none of them passes", predicate.Or(predicate.GenerationChanged(), predicate.LabelChanged()), update, same, newRV, false},
		{"or: create with one passing", predicate.Or(never, always), create, nil, same, true},
		{"or: delete with none passing", predicate.Or(never, never), del, same, nil, false},

		{"not: inverts update", predicate.Not(predicate.LabelChanged()), update, same, relabeled, false},
		{"not: inverts dropped update", predicate.Not(predicate.LabelChanged()), update, same, newRV, true},
		{"not: inverts create", predicate.Not(always), create, nil, same, false},
		{"not: inverts delete", predicate.Not(never), del, same, nil, true},

		{"funcs: nil functions pass create", always, create, nil, same, true},
		{"funcs: nil functions pass update", always, update, same, same, true},
		{"funcs: nil functions pass delete", always, del, same, nil, true},
		{"funcs: set function decides", never, update, same, bumpedGen, false},

		{"object func: create in namespace", inNs, create, nil, same, true},
		{"object func: create elsewhere", inNs, create, nil, inNsB, false},
		{"object func: update judged on new object", inNs, update, same, inNsB, false},
		{"object func: update into namespace", inNs, update, inNsB, same, true},
		{"object func: delete elsewhere", inNs, del, inNsB, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, ask(tt.p, tt.e, tt.oldObj, tt.newObj), "%s", tt.e)
		})
	}
}
