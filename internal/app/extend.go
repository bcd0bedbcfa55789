package app

import (
	"errors"
	"fmt"
	"reflect"

	"go.uber.org/fx"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/metadata"

	"github.com/hexagonal-operator/operator/internal/adapters/cache"
	"github.com/hexagonal-operator/operator/internal/adapters/controller"
	"github.com/hexagonal-operator/operator/internal/adapters/kube"
	"github.com/hexagonal-operator/operator/internal/ports"
)

// Controller adds a controller called name to the operator, as an option
// of [New]:
//
//	app.New(cfg, app.Controller("confighash", confighash.New,
//		app.For[*corev1.ConfigMap](corev1.SchemeGroupVersion.WithResource("configmaps"))))
//
// newReconciler is an ordinary fx constructor of the domain's reconciler:
// its parameters are ports, those [For] provides and any the operator
// provides to all (ports.EventRecorder, ports.Clock, …); its first result
// implements ports.Reconciler and an error may follow. Every change of the
// For kind enqueues the object itself; the controller starts, and waits for
// the caches and for leadership, like the operator's own.
//
// Such a controller always runs: --controllers selects the operator's own
// controllers only. Watches beyond the For kind (owned objects, predicates)
// need a hand-written constructor on controller.NewBuilder, as the
// operator's own controllers have.
func Controller(name string, newReconciler any, opts ...ControllerOption) fx.Option {
	spec := controllerSpec{workers: 1}
	for _, o := range opts {
		o(&spec)
	}
	if err := spec.check(name, newReconciler); err != nil {
		return fx.Error(err)
	}
	workers := spec.workers
	return fx.Module(name,
		spec.primary,
		fx.Provide(fx.Private, fx.Annotate(newReconciler, fx.As(new(ports.Reconciler)))),
		fx.Provide(fx.Annotate(func(d controller.Deps, r ports.Reconciler, p primary) (*controller.Controller, error) {
			return controller.NewBuilder(name, d).For(p.Source).Workers(workers).Complete(r)
		}, fx.ResultTags(controller.GroupControllers))),
	)
}

// ControllerOption shapes a controller added with [Controller].
type ControllerOption func(*controllerSpec)

// For names the kind the controller reconciles: T is its typed object and
// resource where the API serves it, a built-in resource of the typed
// clientset. To the controller's reconciler only, it provides
// ports.ObjectReader[T], read from the operator's shared informer cache,
// and ports.AnnotationWriter for the kind, a merge patch through the
// metadata client. It is required, once.
func For[T cache.Object](resource schema.GroupVersionResource) ControllerOption {
	return func(s *controllerSpec) {
		s.fors++
		s.primary = fx.Provide(fx.Private,
			func(c *cache.Cache) (*cache.Resource[T], error) { return cache.NewResource[T](c, resource) },
			func(r *cache.Resource[T]) ports.ObjectReader[T] { return r },
			func(r *cache.Resource[T]) primary { return primary{r} },
			func(m metadata.Interface, r *cache.Resource[T]) (ports.AnnotationWriter, error) {
				p, err := kube.NewMetadataPatcher(m, resource)
				if err != nil {
					return nil, err
				}
				return p.ReportingKind(r.Kind()), nil
			},
		)
	}
}

// Workers sets how many requests the controller reconciles at once
// (default 1); the work queue never hands one object to two workers.
func Workers(n int) ControllerOption {
	return func(s *controllerSpec) { s.workers = n }
}

type controllerSpec struct {
	primary fx.Option
	fors    int
	workers int
}

// primary is the For kind's change notifications. Its own type keeps it
// apart from the operator's named sources and from other controllers'.
type primary struct{ ports.Source }

var reconcilerType = reflect.TypeFor[ports.Reconciler]()

// check reports declaration mistakes with the controller's name, which fx
// would otherwise report as a missing type deep in the graph.
func (s controllerSpec) check(name string, newReconciler any) error {
	var errs []error
	if name == "" {
		errs = append(errs, errors.New("name is empty"))
	}
	switch s.fors {
	case 0:
		errs = append(errs, errors.New("For was not given"))
	case 1:
	default:
		errs = append(errs, errors.New("For given more than once"))
	}
	if s.workers < 1 {
		errs = append(errs, fmt.Errorf("workers must be at least 1, got %d", s.workers))
	}
	t := reflect.TypeOf(newReconciler)
	if t == nil || t.Kind() != reflect.Func || t.NumOut() == 0 || !t.Out(0).Implements(reconcilerType) {
		errs = append(errs, fmt.Errorf("reconciler constructor %T does not return a ports.Reconciler", newReconciler))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("app: controller %q: %w", name, err)
	}
	return nil
}
