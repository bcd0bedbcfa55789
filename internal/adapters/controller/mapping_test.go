package controller_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/hexagonal-operator/operator/internal/adapters/controller"
	"github.com/hexagonal-operator/operator/internal/ports"
)

type event int

const (
	create event = iota
	update
	del
)

func pod(name string, owners ...metav1.OwnerReference) metav1.Object {
	return &metav1.ObjectMeta{Namespace: "ns", Name: name, OwnerReferences: owners}
}

func owner(apiVersion, kind, name string, controller bool) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: name, UID: types.UID(name), Controller: ptr.To(controller)}
}

// mapEvent is what the event enqueues: the object of a create or delete,
// the old and the new one of an update.
func mapEvent(m controller.MapFunc, e event, oldObj, newObj metav1.Object) []ports.Request {
	switch e {
	case create:
		return controller.RequestsOf(m, newObj)
	case update:
		return controller.RequestsOf(m, oldObj, newObj)
	default:
		return controller.RequestsOf(m, oldObj)
	}
}

func TestMappers(t *testing.T) {
	t.Parallel()
	rsKind := schema.GroupKind{Group: "apps", Kind: "ReplicaSet"}
	coreKind := schema.GroupKind{Kind: "ConfigMap"}
	byLabel := controller.MapFunc(func(o metav1.Object) []ports.Request {
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
		m      controller.MapFunc
		e      event
		oldObj metav1.Object
		newObj metav1.Object
		want   []ports.Request
	}{
		{"object: create", controller.EnqueueObject, create, nil, pod("p"), []ports.Request{req("ns", "p")}},
		{"object: update", controller.EnqueueObject, update, pod("p"), pod("p"), []ports.Request{req("ns", "p")}},
		{"object: update without new object", controller.EnqueueObject, update, pod("p"), nil, []ports.Request{req("ns", "p")}},
		{"object: delete", controller.EnqueueObject, del, pod("p"), nil, []ports.Request{req("ns", "p")}},
		{"object: nil object", controller.EnqueueObject, create, nil, nil, nil},
		{"object: cluster-scoped", controller.EnqueueObject, create, nil, &metav1.ObjectMeta{Name: "n"}, []ports.Request{req("", "n")}},

		{"owner: controller of the kind", controller.EnqueueOwner(rsKind), create, nil, pod("p", rsA), []ports.Request{req("ns", "rs-a")}},
		{"owner: any version of the group", controller.EnqueueOwner(rsKind), create, nil, pod("p", owner("apps/v1beta2", "ReplicaSet", "rs-a", true)), []ports.Request{req("ns", "rs-a")}},
		{"owner: non-controller owner ignored", controller.EnqueueOwner(rsKind), create, nil, pod("p", owner("apps/v1", "ReplicaSet", "rs-a", false)), nil},
		{"owner: controller of another kind", controller.EnqueueOwner(rsKind), create, nil, pod("p", owner("apps/v1", "StatefulSet", "ss", true)), nil},
		{"owner: same kind in another group", controller.EnqueueOwner(rsKind), create, nil, pod("p", owner("example.com/v1", "ReplicaSet", "x", true)), nil},
		{"owner: unparsable apiVersion", controller.EnqueueOwner(rsKind), create, nil, pod("p", owner("a/b/c", "ReplicaSet", "x", true)), nil},
		{"owner: core group", controller.EnqueueOwner(coreKind), create, nil, pod("p", owner("v1", "ConfigMap", "cm", true)), []ports.Request{req("ns", "cm")}},
		{"owner: core group does not match apps", controller.EnqueueOwner(coreKind), create, nil, pod("p", owner("apps/v1", "ConfigMap", "cm", true)), nil},
		{"owner: only the controller among several owners", controller.EnqueueOwner(rsKind), create, nil, pod("p", owner("apps/v1", "ReplicaSet", "other", false), rsB), []ports.Request{req("ns", "rs-b")}},
		{"owner: no owners", controller.EnqueueOwner(rsKind), create, nil, pod("p"), nil},
		{"owner: delete", controller.EnqueueOwner(rsKind), del, pod("p", rsA), nil, []ports.Request{req("ns", "rs-a")}},
		{"owner: update, same owner once", controller.EnqueueOwner(rsKind), update, pod("p", rsA), pod("p", rsA), []ports.Request{req("ns", "rs-a")}},
		{"owner: update, changed owner both", controller.EnqueueOwner(rsKind), update, pod("p", rsA), pod("p", rsB), []ports.Request{req("ns", "rs-a"), req("ns", "rs-b")}},
		{"owner: update, adopted", controller.EnqueueOwner(rsKind), update, pod("p"), pod("p", rsB), []ports.Request{req("ns", "rs-b")}},
		{"owner: update, orphaned", controller.EnqueueOwner(rsKind), update, pod("p", rsA), pod("p"), []ports.Request{req("ns", "rs-a")}},
		{"owner: nil object", controller.EnqueueOwner(rsKind), create, nil, nil, nil},

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
