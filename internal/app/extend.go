package app

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"go.uber.org/fx"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/hexagonal-operator/operator/internal/adapters/cache"
	"github.com/hexagonal-operator/operator/internal/adapters/controller"
	"github.com/hexagonal-operator/operator/internal/adapters/controller/predicate"
	"github.com/hexagonal-operator/operator/internal/adapters/kube"
	"github.com/hexagonal-operator/operator/internal/adapters/webhook"
	"github.com/hexagonal-operator/operator/internal/config"
	"github.com/hexagonal-operator/operator/internal/ports"
)

// Controller adds a controller called name to the operator, as an option
// of [New] or [Main], the way controller-runtime's builder declares one:
//
//	app.Controller("replicaset", replicaset.New,
//		app.For[*appsv1.ReplicaSet](replicaSetsResource, app.MetadataOnly(), app.Writes(app.PatchMetadata)),
//		app.Owns[*corev1.Pod](podsResource, app.MetadataOnly(), app.Trim(cache.WithoutLabels), app.WatchOnly()),
//		app.Workers(4))
//
// Every change of the [For] kind enqueues the object, one of an [Owns]
// kind its controlling For object, one of a [Watches] kind whatever its
// function names. The controller waits for its caches and for leadership,
// and its metrics and logs carry its name.
//
// newReconciler is an ordinary constructor of the domain: its first result
// implements ports.Reconciler and an error may follow; its parameters are
// ports. The operator provides those it shares (ports.EventRecorder,
// ports.Clock, …); each watch offers its kind's ports.Reader (of T, or of
// *metav1.PartialObjectMetadata when cached [MetadataOnly]) and
// ports.Writer[T], to this constructor only and only where it asks for
// them. Two watches that offer a port it asks for make a declaration error
// naming the controller: mark the one it does not read [WatchOnly]. (Two
// readers of one Go type in one constructor cannot be told apart: cache
// one of the kinds typed.)
//
// The controller's permissions follow from the declaration and join
// [GroupPermissions] in [ManagerRole]: list and watch of every watched
// kind, the verbs of its [Writes], update of the For kind's finalizers
// when it creates or updates the objects it owns (their controller
// reference blocks the owner's deletion), and the Events when its
// constructor takes a ports.EventRecorder. The start-up check asks for
// them and `manifests` renders them. A controller added this way always
// runs: --controllers selects the operator's own.
func Controller(name string, newReconciler any, opts ...ControllerOption) fx.Option {
	spec := controllerSpec{name: name, workers: 1}
	for _, o := range opts {
		o(&spec)
	}
	offered, err := spec.check(newReconciler)
	if err != nil {
		return fx.Error(err)
	}
	return fx.Module(name,
		providePermissions(spec.permissions),
		fx.Provide(append([]any{fx.Private}, offered...)...),
		fx.Provide(fx.Private, fx.Annotate(newReconciler, fx.As(new(ports.Reconciler)))),
		fx.Provide(fx.Annotate(spec.build, fx.ResultTags(controller.GroupControllers))),
	)
}

// ControllerOption shapes a controller added with [Controller].
type ControllerOption func(*controllerSpec)

// For names the kind the controller reconciles, once: T is the kind's Go
// type (its name is the kind's) and resource where the API server serves
// it. A resource of the [cache.Typed] groups is cached typed, any other (a
// CRD's) through the dynamic client, decoded into T.
func For[T cache.Object](resource schema.GroupVersionResource, opts ...WatchOption) ControllerOption {
	return func(s *controllerSpec) { s.watches = append(s.watches, watchOf[T]("For", resource, nil, opts)) }
}

// Owns watches a kind the controller's objects own: a change enqueues the
// object's controlling owner when that is of the For kind.
func Owns[T cache.Object](resource schema.GroupVersionResource, opts ...WatchOption) ControllerOption {
	return func(s *controllerSpec) { s.watches = append(s.watches, watchOf[T]("Owns", resource, nil, opts)) }
}

// Watches watches any other kind: a change enqueues what mapFn returns for
// the object (for the old and the new one on update). mapFn must be cheap
// and must not block.
func Watches[T cache.Object](resource schema.GroupVersionResource, mapFn func(obj metav1.Object) []ports.Request, opts ...WatchOption) ControllerOption {
	return func(s *controllerSpec) { s.watches = append(s.watches, watchOf[T]("Watches", resource, mapFn, opts)) }
}

// Workers sets how many requests the controller reconciles at once
// (default 1); the work queue never hands one object to two workers.
func Workers(n int) ControllerOption {
	return func(s *controllerSpec) { s.workers = n }
}

// WatchOption shapes one watch of a controller.
type WatchOption func(*watch)

// WithPredicates filters the kind's events before they are mapped: an
// event is dropped unless every predicate passes it.
func WithPredicates(predicates ...predicate.Predicate) WatchOption {
	return func(w *watch) { w.predicates = append(w.predicates, predicates...) }
}

// MetadataOnly caches the kind's metadata only: the metadata client asks
// the server for PartialObjectMetadata, so a kind whose spec and status the
// reconciler never reads costs only its metadata in memory, and its reader
// is a ports.Reader[*metav1.PartialObjectMetadata]. Every controller
// watching the kind (with the same [Selector]) must declare the same, as
// they share one informer.
func MetadataOnly() WatchOption {
	return func(w *watch) { w.metadataOnly = true }
}

// Trim drops what no reader of the kind looks at before the cache holds
// it: metadata with cache.WithoutLabels and cache.WithoutAnnotations, any
// part of a typed object with a cache.TrimOf of T (for a kind read for a
// few status fields, say, the spec). Every controller watching the kind
// (with the same [Selector]) must declare the same trims, in the same
// order, as they share one informer.
func Trim(trims ...cache.Trim) WatchOption {
	return func(w *watch) { w.trims = append(w.trims, trims...) }
}

// Selector caches and watches only the objects of the kind whose labels
// sel matches: the API server filters the list and the watch, so the
// others cost neither memory nor events, and the reader finds none of
// them (ErrNotFound); an object whose labels stop matching is, to the
// controller, deleted. A selector the objects the controller writes always
// carry (a label it sets) keeps a kind that is mostly other people's out
// of memory. Watches of one kind with different selectors have informers
// of their own; with the same one they share it. nil or an empty selector
// selects every object.
func Selector(sel labels.Selector) WatchOption {
	return func(w *watch) { w.selector = sel }
}

// WatchOnly keeps the kind's reader and writer from the reconciler's
// constructor: the kind only queues reconciles.
func WatchOnly() WatchOption {
	return func(w *watch) { w.watchOnly = true }
}

// Writes declares the writes the reconciler makes to the kind, which its
// constructor's ports.Writer[T] then allows, and no other: each is one
// verb of the RBAC (UpdateStatus the status subresource's update), so
// the role `manifests` renders grants what the code does. A write not
// declared fails, terminal, naming the declaration to change.
func Writes(writes ...Write) WatchOption {
	return func(w *watch) { w.writes = append(w.writes, writes...) }
}

// Write is one method of ports.Writer.
type Write string

// The methods of ports.Writer, for [Writes].
const (
	Create        Write = "Create"
	Update        Write = "Update"
	UpdateStatus  Write = "UpdateStatus"
	PatchMetadata Write = "PatchMetadata"
	Delete        Write = "Delete"
)

// rbac is the verb and subresource the write needs.
func (w Write) rbac() (verb, subresource string, err error) {
	switch w {
	case Create:
		return "create", "", nil
	case Update:
		return "update", "", nil
	case UpdateStatus:
		return "update", "status", nil
	case PatchMetadata:
		return "patch", "", nil
	case Delete:
		return "delete", "", nil
	}
	return "", "", fmt.Errorf("unknown write %q: use app.Create, app.Update, app.UpdateStatus, app.PatchMetadata or app.Delete", string(w))
}

// Sources is the seam through which every controller gets what it
// watches: given the source the cache serves for one watch, it returns the
// one the controller registers on. The default returns it as is; a test
// swaps one with fx.Decorate:
//
//	fx.Decorate(func(next app.Sources) app.Sources {
//		return func(w app.Watched) controller.Source {
//			if w.Controller == "replicaset" && w.Resource.Resource == "replicasets" {
//				return muted{w.Source}
//			}
//			return next(w)
//		}
//	})
type Sources func(w Watched) controller.Source

// Watched is one watch of a controller, as [Sources] sees it.
type Watched struct {
	Controller string
	Resource   schema.GroupVersionResource
	Source     controller.Source
}

func cachedSources() Sources { return func(w Watched) controller.Source { return w.Source } }

type controllerSpec struct {
	name    string
	watches []watch
	workers int
	// records tells whether the reconciler takes a ports.EventRecorder,
	// and so needs the Events' permissions.
	records bool
}

// watch is one kind a controller watches, and the reader and writer it
// offers the reconciler's constructor.
type watch struct {
	verb         string // For, Owns or Watches
	resource     schema.GroupVersionResource
	kind         string
	mapFn        controller.MapFunc
	predicates   []predicate.Predicate
	metadataOnly bool
	trims        []cache.Trim
	selector     labels.Selector
	watchOnly    bool
	writes       []Write
	err          error

	source                 func(*cache.Cache, dynamic.Interface) (controller.Source, error)
	readerType, writerType reflect.Type
	newReader, newWriter   any // fx constructors of the two
}

func watchOf[T cache.Object](verb string, resource schema.GroupVersionResource, mapFn controller.MapFunc, opts []WatchOption) watch {
	w := watch{verb: verb, resource: resource, kind: reflect.TypeFor[T]().Elem().Name(), mapFn: mapFn}
	for _, o := range opts {
		o(&w)
	}
	if reflect.TypeFor[T]() == reflect.TypeFor[*metav1.PartialObjectMetadata]() {
		w.err = fmt.Errorf("%s %s: T is the kind's Go type; app.MetadataOnly() caches its metadata only", verb, resource.GroupResource())
	}
	cached := []cache.Option{cache.Selector(w.selector)}
	for _, t := range w.trims {
		cached = append(cached, t)
	}
	if kind := w.kind; w.metadataOnly {
		offerReader(&w, func(c *cache.Cache, _ dynamic.Interface) (*cache.Resource[*metav1.PartialObjectMetadata], error) {
			return cache.NewMetadataResource(c, resource, kind, cached...)
		})
	} else {
		offerReader(&w, func(c *cache.Cache, dyn dynamic.Interface) (*cache.Resource[T], error) {
			if cache.Typed(resource.GroupVersion()) {
				return cache.NewResource[T](c, resource, cached...)
			}
			return cache.NewDynamicResource[T](c, dyn, resource, cached...)
		})
	}
	w.writerType = reflect.TypeFor[ports.Writer[T]]()
	declared := declaredWrites[T]{resource: resource.GroupResource().String(), allowed: w.writes}
	w.newWriter = func(c *kube.Clients) (ports.Writer[T], error) {
		kw, err := kube.NewWriter[T](c, resource)
		if err != nil {
			return nil, err
		}
		d := declared
		d.Writer = kw
		return d, nil
	}
	return w
}

// offerReader makes w's cache resource its source and the reader it
// offers; both share the kind's one informer.
func offerReader[R cache.Object](w *watch, newResource func(*cache.Cache, dynamic.Interface) (*cache.Resource[R], error)) {
	w.source = func(c *cache.Cache, dyn dynamic.Interface) (controller.Source, error) { return newResource(c, dyn) }
	w.readerType = reflect.TypeFor[ports.Reader[R]]()
	w.newReader = func(c *cache.Cache, dyn dynamic.Interface) (ports.Reader[R], error) { return newResource(c, dyn) }
}

var (
	reconcilerType    = reflect.TypeFor[ports.Reconciler]()
	eventRecorderType = reflect.TypeFor[ports.EventRecorder]()
)

// check reports declaration mistakes with the controller's name, which fx
// would otherwise report as a missing or doubly provided type deep in the
// graph, and returns the readers and writers the constructor asks for.
func (s *controllerSpec) check(newReconciler any) ([]any, error) {
	var errs []error
	if s.name == "" {
		errs = append(errs, errors.New("name is empty"))
	}
	if fors := len(slices.DeleteFunc(slices.Clone(s.watches), func(w watch) bool { return w.verb != "For" })); fors == 0 {
		errs = append(errs, errors.New("For was not given"))
	} else if fors > 1 {
		errs = append(errs, errors.New("For given more than once"))
	}
	if s.workers < 1 {
		errs = append(errs, fmt.Errorf("workers must be at least 1, got %d", s.workers))
	}
	var offered []any
	asked := map[reflect.Type]bool{}
	t := reflect.TypeOf(newReconciler)
	if t == nil || t.Kind() != reflect.Func || t.NumOut() == 0 || !t.Out(0).Implements(reconcilerType) {
		errs = append(errs, fmt.Errorf("reconciler constructor %T does not return a ports.Reconciler", newReconciler))
	} else {
		for i := range t.NumIn() {
			asked[t.In(i)] = true
			s.records = s.records || t.In(i) == eventRecorderType
			provider, err := s.offer(t.In(i))
			errs = append(errs, err)
			if provider != nil {
				offered = append(offered, provider)
			}
		}
	}
	for _, w := range s.watches {
		if w.verb == "Watches" && w.mapFn == nil {
			w.err = fmt.Errorf("Watches %s: the map function is nil", w.resource.GroupResource())
		}
		errs = append(errs, w.err, w.checkWrites(t != nil && asked[w.writerType]))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("app: controller %q: %w", s.name, err)
	}
	return offered, nil
}

// offer is the constructor of param, a parameter of the reconciler's
// constructor, when a watch offers it: nil when none does, an error when
// several do.
func (s *controllerSpec) offer(param reflect.Type) (any, error) {
	var (
		provider any
		by       []string
	)
	for _, w := range s.watches {
		switch {
		case w.watchOnly:
			continue
		case param == w.readerType:
			provider = w.newReader
		case param == w.writerType:
			provider = w.newWriter
		default:
			continue
		}
		by = append(by, w.verb+" "+w.resource.GroupResource().String())
	}
	if len(by) > 1 {
		return nil, fmt.Errorf("the reconciler constructor asks for a %s, which %d watches offer (%s): mark those it does not read app.WatchOnly()",
			param, len(by), strings.Join(by, ", "))
	}
	return provider, nil
}

// checkWrites reports a writer asked for without its writes declared,
// and writes declared without the writer to make them.
func (w watch) checkWrites(writerAsked bool) error {
	where := w.verb + " " + w.resource.GroupResource().String()
	for _, wr := range w.writes {
		if _, _, err := wr.rbac(); err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
	}
	switch {
	case w.watchOnly && len(w.writes) > 0:
		return fmt.Errorf("%s: app.Writes and app.WatchOnly() together: a watch-only kind offers no writer; declare the writes on the watch whose writer the reconciler takes", where)
	case w.watchOnly:
		return nil
	case writerAsked && len(w.writes) == 0:
		return fmt.Errorf("%s: the reconciler constructor takes a %s: say which writes it makes with app.Writes(app.Create, …), which its RBAC grants", where, w.writerType)
	case !writerAsked && len(w.writes) > 0:
		return fmt.Errorf("%s: app.Writes declared, but the reconciler constructor takes no %s to make them", where, w.writerType)
	}
	return nil
}

// permissions are what the controller's declaration uses: each watched
// kind's list and watch, each declared write's verb, the For kind's
// finalizers when the controller creates or updates a kind it owns
// (through whichever watch's writer), and the Events when the reconciler
// takes a recorder.
func (s *controllerSpec) permissions(cfg config.Config) []Permission {
	var out []Permission
	add := func(group, resource, why string, verbs ...string) {
		out = append(out, Permission{Role: ManagerRole, Verbs: verbs, Group: group, Resource: resource, Namespace: cfg.Namespace,
			Why: "controller " + s.name + ": " + why})
	}
	var forResource schema.GroupVersionResource
	owned := map[schema.GroupVersionResource]bool{}
	for _, w := range s.watches {
		switch w.verb {
		case "For":
			forResource = w.resource
		case "Owns":
			owned[w.resource] = true
		}
	}
	ownerRef := ""
	for _, w := range s.watches {
		verbs, writes := []string{"list", "watch"}, []string{}
		for _, wr := range w.writes {
			verb, sub, err := wr.rbac()
			if err != nil {
				continue // check refused the declaration
			}
			writes = append(writes, "app."+string(wr))
			if sub != "" {
				add(w.resource.Group, w.resource.Resource+"/"+sub, fmt.Sprintf("%s %s, app.Writes(app.%s)", w.verb, w.kind, wr), verb)
				continue
			}
			verbs = append(verbs, verb)
			if owned[w.resource] && (wr == Create || wr == Update) {
				ownerRef = w.kind // it writes what it owns, with its controller reference
			}
		}
		why := fmt.Sprintf("%s %s, cached", w.verb, w.kind)
		if w.metadataOnly {
			why += " metadata only"
		}
		if w.selector != nil && !w.selector.Empty() {
			why += ", selected by " + w.selector.String()
		}
		if len(writes) > 0 {
			why += ", app.Writes(" + strings.Join(writes, ", ") + ")"
		}
		add(w.resource.Group, w.resource.Resource, why, verbs...)
	}
	if ownerRef != "" {
		add(forResource.Group, forResource.Resource+"/finalizers",
			"the controller reference of each "+ownerRef+" it writes blocks the owner's deletion, which clusters with OwnerReferencesPermissionEnforcement allow only to whoever may update the owner's finalizers; nothing is written there",
			"update")
	}
	if s.records {
		add("events.k8s.io", "events", "its Events (client-go tools/events), patched into a series when one repeats", "create", "patch")
	}
	return out
}

type buildParams struct {
	fx.In
	Deps       controller.Deps
	Reconciler ports.Reconciler
	Cache      *cache.Cache
	Dynamic    dynamic.Interface
	Sources    Sources
}

// build is the controller: each watch's source from the cache, through
// Sources, mapped as its verb says.
func (s *controllerSpec) build(p buildParams) (*controller.Controller, error) {
	var owner schema.GroupKind
	for _, w := range s.watches {
		if w.verb == "For" {
			owner = schema.GroupKind{Group: w.resource.Group, Kind: w.kind}
		}
	}
	watches := make([]controller.Watch, 0, len(s.watches))
	for _, w := range s.watches {
		src, err := w.source(p.Cache, p.Dynamic)
		if err != nil {
			return nil, fmt.Errorf("controller %q: %s %s: %w", s.name, w.verb, w.resource.GroupResource(), err)
		}
		mapFn := w.mapFn
		switch w.verb {
		case "For":
			mapFn = controller.EnqueueObject
		case "Owns":
			mapFn = controller.EnqueueOwner(owner)
		}
		src = p.Sources(Watched{Controller: s.name, Resource: w.resource, Source: src})
		watches = append(watches, controller.Watch{Source: src, Map: mapFn, Predicates: w.predicates})
	}
	return controller.New(controller.Config{Name: s.name, Workers: s.workers, Watches: watches, Reconciler: p.Reconciler}, p.Deps)
}

// Mutating adds a mutating admission webhook for the objects of resource,
// as an option of [New]:
//
//	app.Mutating[greetingv1.Greeting](greetingv1.Resource, greeting.NewDefaulter)
//
// newDefaulter is an ordinary fx constructor whose first result implements
// ports.Defaulter[*T]; T's type name is the kind. The webhook is
// kubebuilder's unless opts say otherwise: served at
// /mutate-<group with dashes>-<version>-<kind>, named
// m<kind>-<version>.<group>, for creates and updates of resource at its
// version only (matchPolicy Exact), failing closed, without side effects,
// with a 10 s timeout, never reinvoked. config/webhook must register it
// likewise. The operator's own webhooks are declared the same way
// (webhooks.go).
func Mutating[T any](resource schema.GroupVersionResource, newDefaulter any, opts ...WebhookOption) fx.Option {
	h := webhookRow[T]("mutate", resource, opts)
	if err := checkRule[T]("Mutating", newDefaulter, reflect.TypeFor[ports.Defaulter[*T]](), h); err != nil {
		return fx.Error(err)
	}
	return fx.Module(h.Path,
		fx.Provide(fx.Private, fx.Annotate(newDefaulter, fx.As(new(ports.Defaulter[*T])))),
		fx.Provide(fx.Annotate(func(d ports.Defaulter[*T]) []webhook.Hook {
			return []webhook.Hook{webhook.Mutating(h, d)}
		}, fx.ResultTags(webhook.GroupHooks))),
	)
}

// Validating adds a validating admission webhook, as [Mutating] adds a
// mutating one: newValidator's first result implements
// ports.Validator[*T], and the webhook is served at
// /validate-<group with dashes>-<version>-<kind>, named
// v<kind>-<version>.<group>.
func Validating[T any](resource schema.GroupVersionResource, newValidator any, opts ...WebhookOption) fx.Option {
	h := webhookRow[T]("validate", resource, opts)
	if err := checkRule[T]("Validating", newValidator, reflect.TypeFor[ports.Validator[*T]](), h); err != nil {
		return fx.Error(err)
	}
	return fx.Module(h.Path,
		fx.Provide(fx.Private, fx.Annotate(newValidator, fx.As(new(ports.Validator[*T])))),
		fx.Provide(fx.Annotate(func(v ports.Validator[*T]) []webhook.Hook {
			return []webhook.Hook{webhook.Validating(h, v)}
		}, fx.ResultTags(webhook.GroupHooks))),
	)
}

// WebhookOption changes a webhook's row from the defaults of [Mutating]
// and [Validating]: any field of webhook.Hook but Type and Admitter.
type WebhookOption func(*webhook.Hook)

// Named names the webhook in its configuration.
func Named(name string) WebhookOption { return func(h *webhook.Hook) { h.Name = name } }

// At serves the webhook at path.
func At(path string) WebhookOption { return func(h *webhook.Hook) { h.Path = path } }

// Operations are those the API server sends the webhook, and the only
// ones its rule is asked about.
func Operations(ops ...admissionregistrationv1.OperationType) WebhookOption {
	return func(h *webhook.Hook) { h.Operations = ops }
}

// ObjectSelector sends the webhook only the objects whose labels match
// selector (on update, the old or the new object): a rule scoped to the
// objects it is about never holds up, nor fails closed for, any other.
func ObjectSelector(selector *metav1.LabelSelector) WebhookOption {
	return func(h *webhook.Hook) { h.ObjectSelector = selector }
}

// NamespaceSelector sends the webhook only the objects of the namespaces
// whose labels match selector (kubernetes.io/metadata.name holds each
// namespace's name).
func NamespaceSelector(selector *metav1.LabelSelector) WebhookOption {
	return func(h *webhook.Hook) { h.NamespaceSelector = selector }
}

// MatchConditions send the webhook only the requests for which every CEL
// expression is true, evaluated by the API server before it calls.
func MatchConditions(conditions ...admissionregistrationv1.MatchCondition) WebhookOption {
	return func(h *webhook.Hook) { h.MatchConditions = conditions }
}

// FailurePolicy is what the API server does when the webhook cannot
// answer: Fail (the default) refuses the request, Ignore lets it through
// unchecked.
func FailurePolicy(policy admissionregistrationv1.FailurePolicyType) WebhookOption {
	return func(h *webhook.Hook) { h.FailurePolicy = policy }
}

// Timeout is how long the API server waits for the webhook, in seconds
// from 1 to 30 (default 10).
func Timeout(seconds int32) WebhookOption {
	return func(h *webhook.Hook) { h.TimeoutSeconds = seconds }
}

// ReadsMetadataOnly says the rule reads the object's metadata alone
// (names, labels, annotations, owner references): the webhook decodes
// nothing else of it, most of the cost of a large object, and a defaulter
// that changes more than labels and annotations is answered with an
// error. T must embed ObjectMeta.
func ReadsMetadataOnly() WebhookOption {
	return func(h *webhook.Hook) { h.MetadataOnly = true }
}

// checkRule reports the mistakes of a rule's declaration in one error
// naming the rule, which fx would report as a type mismatch deep in the
// graph, or the API server only when the configuration is applied.
func checkRule[T any](decl string, ctor any, port reflect.Type, h webhook.Hook) error {
	var errs []error
	t := reflect.TypeFor[T]()
	if t.Kind() == reflect.Pointer {
		errs = append(errs, fmt.Errorf("the type argument is the kind's value type: write app.%s[%s], not app.%s[%s] (For, Owns and Watches take the pointer, as they cache objects; a rule's port takes *T)",
			decl, t.Elem(), decl, t))
	} else if ct := reflect.TypeOf(ctor); ct == nil || ct.Kind() != reflect.Func || ct.NumOut() == 0 || !ct.Out(0).Implements(port) {
		errs = append(errs, fmt.Errorf("constructor %T does not return a %s", ctor, port))
	}
	if h.TimeoutSeconds < 1 || h.TimeoutSeconds > 30 {
		errs = append(errs, fmt.Errorf("app.Timeout(%d): the API server takes 1 to 30 seconds", h.TimeoutSeconds))
	}
	if h.FailurePolicy != admissionregistrationv1.Fail && h.FailurePolicy != admissionregistrationv1.Ignore {
		errs = append(errs, fmt.Errorf("app.FailurePolicy(%q): Fail or Ignore", h.FailurePolicy))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("app: %s rule %s (%s): %w", strings.ToLower(decl), h.Name, h.Path, err)
	}
	return nil
}

// webhookRow is kubebuilder's row for a webhook of verb, changed by opts.
func webhookRow[T any](verb string, resource schema.GroupVersionResource, opts []WebhookOption) webhook.Hook {
	kind := resource.GroupVersion().WithKind(reflect.TypeFor[T]().Name())
	group := kind.Group
	if group == "" { // the API server wants a qualified name
		group = "hexagonal-operator.io"
	}
	h := webhook.Hook{
		Name:           fmt.Sprintf("%c%s-%s.%s", verb[0], strings.ToLower(kind.Kind), kind.Version, group),
		Path:           fmt.Sprintf("/%s-%s-%s-%s", verb, strings.ReplaceAll(kind.Group, ".", "-"), kind.Version, strings.ToLower(kind.Kind)),
		Resource:       webhook.Resource{Kind: kind, Resource: resource},
		Operations:     []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
		FailurePolicy:  admissionregistrationv1.Fail,
		MatchPolicy:    admissionregistrationv1.Exact,
		SideEffects:    admissionregistrationv1.SideEffectClassNone,
		TimeoutSeconds: 10,
	}
	if verb == "mutate" {
		h.ReinvocationPolicy = admissionregistrationv1.NeverReinvocationPolicy
	}
	for _, o := range opts {
		o(&h)
	}
	return h
}

// declaredWrites is the reconciler's ports.Writer[T]: the kube writer,
// allowing only the writes its watch declares, so that the code cannot
// make a write its RBAC does not grant.
type declaredWrites[T any] struct {
	ports.Writer[T]
	resource string
	allowed  []Write
}

var _ ports.Writer[*metav1.PartialObjectMetadata] = declaredWrites[*metav1.PartialObjectMetadata]{}

func (d declaredWrites[T]) check(w Write) error {
	if slices.Contains(d.allowed, w) {
		return nil
	}
	return ports.Terminal(fmt.Errorf("%s %s: not declared: add app.%s to the app.Writes of its watch, and regenerate the RBAC", w, d.resource, w))
}

func (d declaredWrites[T]) Create(ctx context.Context, obj T) (T, error) {
	if err := d.check(Create); err != nil {
		var zero T
		return zero, err
	}
	return d.Writer.Create(ctx, obj)
}

func (d declaredWrites[T]) Update(ctx context.Context, obj T) (T, error) {
	if err := d.check(Update); err != nil {
		var zero T
		return zero, err
	}
	return d.Writer.Update(ctx, obj)
}

func (d declaredWrites[T]) UpdateStatus(ctx context.Context, obj T) (T, error) {
	if err := d.check(UpdateStatus); err != nil {
		var zero T
		return zero, err
	}
	return d.Writer.UpdateStatus(ctx, obj)
}

func (d declaredWrites[T]) PatchMetadata(ctx context.Context, key types.NamespacedName, patch ports.MetadataPatch) error {
	if err := d.check(PatchMetadata); err != nil {
		return err
	}
	return d.Writer.PatchMetadata(ctx, key, patch)
}

func (d declaredWrites[T]) Delete(ctx context.Context, key types.NamespacedName, uid types.UID) error {
	if err := d.check(Delete); err != nil {
		return err
	}
	return d.Writer.Delete(ctx, key, uid)
}
