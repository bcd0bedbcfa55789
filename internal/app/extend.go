package app

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	"go.uber.org/fx"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/hexagonal-operator/operator/internal/adapters/cache"
	"github.com/hexagonal-operator/operator/internal/adapters/controller"
	"github.com/hexagonal-operator/operator/internal/adapters/kube"
	"github.com/hexagonal-operator/operator/internal/adapters/webhook"
	"github.com/hexagonal-operator/operator/internal/config"
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
	workers, resource := spec.workers, spec.resource
	return fx.Module(name,
		spec.primary,
		// The start-up check asks for what the controller's cache needs,
		// and for its Events; what its reconciler writes is its own
		// business.
		fx.Provide(fx.Annotate(func(cfg config.Config) []kube.Access {
			grant := "the RBAC of controller " + name
			return []kube.Access{
				{Verb: "list", Group: resource.Group, Resource: resource.Resource, Namespace: cfg.Namespace, GrantedBy: grant},
				{Verb: "watch", Group: resource.Group, Resource: resource.Resource, Namespace: cfg.Namespace, GrantedBy: grant},
				{Verb: "create", Group: "events.k8s.io", Resource: "events", Namespace: cfg.Namespace, GrantedBy: grant},
				{Verb: "patch", Group: "events.k8s.io", Resource: "events", Namespace: cfg.Namespace, GrantedBy: grant},
			}
		}, fx.ResultTags(groupAccess))),
		fx.Provide(fx.Private, fx.Annotate(newReconciler, fx.As(new(ports.Reconciler)))),
		fx.Provide(fx.Annotate(func(d controller.Deps, r ports.Reconciler, p primary) (*controller.Controller, error) {
			return controller.NewBuilder(name, d).For(p.Source).Workers(workers).Complete(r)
		}, fx.ResultTags(controller.GroupControllers))),
	)
}

// ControllerOption shapes a controller added with [Controller].
type ControllerOption func(*controllerSpec)

// For names the kind the controller reconciles: T is its typed object and
// resource where the API serves it. A built-in resource of the typed
// clientset is cached typed; any other (a CRD's) through the dynamic
// client, decoded into T, whose type name must be the kind's. To the
// controller's reconciler only, it provides ports.Reader[T], read from the
// operator's shared informer cache, and ports.Writer[T], the API server
// through the operator's clients. It is required, once.
func For[T cache.Object](resource schema.GroupVersionResource) ControllerOption {
	return func(s *controllerSpec) {
		s.fors++
		s.resource = resource
		s.primary = fx.Provide(fx.Private,
			func(c *cache.Cache, dyn dynamic.Interface) (*cache.Resource[T], error) {
				if cache.Typed(resource.GroupVersion()) {
					return cache.NewResource[T](c, resource)
				}
				return cache.NewDynamicResource[T](c, dyn, resource)
			},
			func(r *cache.Resource[T]) ports.Reader[T] { return r },
			func(r *cache.Resource[T]) primary { return primary{r} },
			func(c *kube.Clients) (ports.Writer[T], error) { return kube.NewWriter[T](c, resource) },
		)
	}
}

// Workers sets how many requests the controller reconciles at once
// (default 1); the work queue never hands one object to two workers.
func Workers(n int) ControllerOption {
	return func(s *controllerSpec) { s.workers = n }
}

type controllerSpec struct {
	primary  fx.Option
	resource schema.GroupVersionResource
	fors     int
	workers  int
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

// Mutating adds a mutating admission webhook for the objects of resource
// (creates and updates), as an option of [New]:
//
//	app.Mutating[greetingv1.Greeting](greetingv1.Resource, greeting.NewDefaulter)
//
// newMutator is an ordinary fx constructor whose first result implements
// ports.Mutator[T]. The webhook is served at kubebuilder's path
// (/mutate-<group with dashes>-<version>-<kind>), fails closed, has no side
// effects and a 10 s timeout; config/webhook must register it likewise.
// T's type name is the kind.
func Mutating[T any](resource schema.GroupVersionResource, newMutator any) fx.Option {
	res := webhookResource[T](resource)
	path := webhookPath("mutate", res)
	return fx.Module(path,
		fx.Provide(fx.Private, fx.Annotate(newMutator, fx.As(new(ports.Mutator[T])))),
		fx.Provide(fx.Annotate(func(m ports.Mutator[T]) []webhook.Hook {
			h := mutating(webhookName("m", res), path, webhook.Mutating(res, m), admissionregistrationv1.NeverReinvocationPolicy)
			return []webhook.Hook{exact(h, resource)}
		}, fx.ResultTags(webhook.GroupHooks))),
	)
}

// Validating adds a validating admission webhook for the objects of
// resource, as [Mutating] does for a mutating one, served at
// /validate-<group with dashes>-<version>-<kind>.
func Validating[T any](resource schema.GroupVersionResource, newValidator any) fx.Option {
	res := webhookResource[T](resource)
	path := webhookPath("validate", res)
	return fx.Module(path,
		fx.Provide(fx.Private, fx.Annotate(newValidator, fx.As(new(ports.Validator[T])))),
		fx.Provide(fx.Annotate(func(v ports.Validator[T]) []webhook.Hook {
			return []webhook.Hook{exact(validating(webhookName("v", res), path, webhook.Validating(res, v)), resource)}
		}, fx.ResultTags(webhook.GroupHooks))),
	)
}

func webhookResource[T any](resource schema.GroupVersionResource) webhook.Resource {
	return webhook.Resource{Kind: resource.GroupVersion().WithKind(reflect.TypeFor[T]().Name()), Resource: resource}
}

// webhookPath is kubebuilder's path of a webhook: the verb, the group with
// its dots as dashes, the version and the kind in lower case.
func webhookPath(verb string, res webhook.Resource) string {
	return fmt.Sprintf("/%s-%s-%s-%s", verb, strings.ReplaceAll(res.Kind.Group, ".", "-"), res.Kind.Version, strings.ToLower(res.Kind.Kind))
}

// webhookName is kubebuilder's name of a webhook: m or v, the kind, the
// version and the group, which a core kind lacks; the API server wants a
// qualified name, so the operator's domain stands in for it.
func webhookName(prefix string, res webhook.Resource) string {
	group := res.Kind.Group
	if group == "" {
		group = "hexagonal-operator.io"
	}
	return fmt.Sprintf("%s%s-%s.%s", prefix, strings.ToLower(res.Kind.Kind), res.Kind.Version, group)
}

// exact sends the hook creates and updates of resource at its version only.
func exact(h webhook.Hook, resource schema.GroupVersionResource) webhook.Hook {
	h.Rules = createOrUpdate(resource)
	h.MatchPolicy = admissionregistrationv1.Exact
	return h
}
