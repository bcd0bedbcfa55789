package handler_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/hexagonal-operator/operator/internal/adapters/controller/handler"
	"github.com/hexagonal-operator/operator/internal/ports"
)

type event int

const (
	create event = iota
	update
	del
)

func req(ns, name string) ports.Request {
	return ports.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}}
}

func pod(name string, owners ...metav1.OwnerReference) metav1.Object {
	return &metav1.ObjectMeta{Namespace: "ns", Name: name, OwnerReferences: owners}
}

func owner(apiVersion, kind, name string, controller bool) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: name, UID: types.UID(name), Controller: ptr.To(controller)}
}

func mapEvent(m handler.Mapper, e event, oldObj, newObj metav1.Object) []ports.Request {
	switch e {
	case create:
		return m.Create(newObj)
	case update:
		return m.Update(oldObj, newObj)
	default:
		return m.Delete(oldObj)
	}
}

func TestMappers(t *testing.T) {
	t.Parallel()
	rsKind := schema.GroupKind{Group: "apps", Kind: "ReplicaSet"}
	coreKind := schema.GroupKind{Kind: "ConfigMap"}
	byLabel := handler.MapFunc(func(o metav1.Object) []ports.Request {
		if v, ok := o.GetLabels()["target"]; ok {
			return []ports.Request{req(o.GetNamespace(), v), req(o.GetNamespace(), v)}
		}
		return nil
	})
	labeled := func(name, target string) metav1.Object {
		return &metav1.ObjectMeta{Namespace: "ns", Name: name, Labels: map[string]string{"target": target}}
	}

	rsA := owner("apps/v1", "ReplicaSet", "rs-a", true)
	rsB := owner("apps/v1", "ReplicaSet", "rs-b", true)

	tests := []struct {
		name   string
		m      handler.Mapper
		e      event
		oldObj metav1.Object
		newObj metav1.Object
		want   []ports.Request
	}{
		{"object: create", handler.EnqueueObject(), create, nil, pod("p"), []ports.Request{req("ns", "p")}},
		{"object: update", handler.EnqueueObject(), update, pod("p"), pod("p"), []ports.Request{req("ns", "p")}},
		{"object: update without new object", handler.EnqueueObject(), update, pod("p"), nil, []ports.Request{req("ns", "p")}},
		{"object: delete", handler.EnqueueObject(), del, pod("p"), nil, []ports.Request{req("ns", "p")}},
		{"object: nil object", handler.EnqueueObject(), create, nil, nil, nil},
		{"object: cluster-scoped", handler.EnqueueObject(), create, nil, &metav1.ObjectMeta{Name: "n"}, []ports.Request{req("", "n")}},

		{"owner: controller of the kind", handler.EnqueueOwner(rsKind), create, nil, pod("p", rsA), []ports.Request{req("ns", "rs-a")}},
		{"owner: any version of the group", handler.EnqueueOwner(rsKind), create, nil, pod("p", owner("apps/v1beta2", "ReplicaSet", "rs-a", true)), []ports.Request{req("ns", "rs-a")}},
		{"owner: non-controller owner ignored", handler.EnqueueOwner(rsKind), create, nil, pod("p", owner("apps/v1", "ReplicaSet", "rs-a", false)), nil},
		{"owner: controller of another kind", handler.EnqueueOwner(rsKind), create, nil, pod("p", owner("apps/v1", "StatefulSet", "ss", true)), nil},
		{"owner: same kind in another group", handler.EnqueueOwner(rsKind), create, nil, pod("p", owner("example.com/v1", "ReplicaSet", "x", true)), nil},
		{"owner: unparsable apiVersion", handler.EnqueueOwner(rsKind), create, nil, pod("p", owner("a/b/c", "ReplicaSet", "x", true)), nil},
		{"owner: core group", handler.EnqueueOwner(coreKind), create, nil, pod("p", owner("v1", "ConfigMap", "cm", true)), []ports.Request{req("ns", "cm")}},
		{"owner: core group does not match apps", handler.EnqueueOwner(coreKind), create, nil, pod("p", owner("apps/v1", "ConfigMap", "cm", true)), nil},
		{"owner: only the controller among several owners", handler.EnqueueOwner(rsKind), create, nil, pod("p", owner("apps/v1", "ReplicaSet", "other", false), rsB), []ports.Request{req("ns", "rs-b")}},
		{"owner: no owners", handler.EnqueueOwner(rsKind), create, nil, pod("p"), nil},
		{"owner: delete", handler.EnqueueOwner(rsKind), del, pod("p", rsA), nil, []ports.Request{req("ns", "rs-a")}},
		{"owner: update, same owner once", handler.EnqueueOwner(rsKind), update, pod("p", rsA), pod("p", rsA), []ports.Request{req("ns", "rs-a")}},
		{"owner: update, changed owner both", handler.EnqueueOwner(rsKind), update, pod("p", rsA), pod("p", rsB), []ports.Request{req("ns", "rs-a"), req("ns", "rs-b")}},
		{"owner: update, adopted", handler.EnqueueOwner(rsKind), update, pod("p"), pod("p", rsB), []ports.Request{req("ns", "rs-b")}},
		{"owner: update, orphaned", handler.EnqueueOwner(rsKind), update, pod("p", rsA), pod("p"), []ports.Request{req("ns", "rs-a")}},
		{"owner: nil object", handler.EnqueueOwner(rsKind), create, nil, nil, nil},

		{"map: create deduplicated", byLabel, create, nil, labeled("cm", "t1"), []ports.Request{req("ns", "t1")}},
		{"map: nothing", byLabel, create, nil, pod("p"), nil},
		{"map: update, both sides", byLabel, update, labeled("cm", "t1"), labeled("cm", "t2"), []ports.Request{req("ns", "t1"), req("ns", "t2")}},
		{"map: update, same target once", byLabel, update, labeled("cm", "t1"), labeled("cm", "t1"), []ports.Request{req("ns", "t1")}},
		{"map: update without new object", byLabel, update, labeled("cm", "t1"), nil, []ports.Request{req("ns", "t1")}},
		{"map: delete", byLabel, del, labeled("cm", "t1"), nil, []ports.Request{req("ns", "t1")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, mapEvent(tt.m, tt.e, tt.oldObj, tt.newObj))
		})
	}
}
