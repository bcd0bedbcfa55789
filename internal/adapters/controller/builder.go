package controller

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/hexagonal-operator/operator/internal/adapters/controller/handler"
	"github.com/hexagonal-operator/operator/internal/adapters/controller/predicate"
	"github.com/hexagonal-operator/operator/internal/ports"
)

// Builder declares a controller in a few lines:
//
//	c, err := controller.NewBuilder("replicaset", deps).
//		For(replicaSets, predicate.Or(predicate.GenerationChanged(), predicate.LabelChanged())).
//		Owns(pods, schema.GroupKind{Group: "apps", Kind: "ReplicaSet"}).
//		Workers(4).
//		Complete(reconciler)
//
// Mistakes are collected and reported together by Complete; the methods
// never panic.
type Builder struct {
	name    string
	deps    Deps
	workers int
	forSet  bool
	watches []Watch
	errs    []error
}

// NewBuilder starts a controller called name (see [Config.Name]) with one
// worker.
func NewBuilder(name string, deps Deps) *Builder {
	return &Builder{name: name, deps: deps, workers: 1}
}

// For names the kind the controller reconciles: every event of src that
// passes the predicates enqueues the object itself. It is required, once.
func (b *Builder) For(src ports.Source, predicates ...predicate.Predicate) *Builder {
	if b.forSet {
		// A request carries no kind, so two primary kinds would be
		// indistinguishable to the reconciler.
		b.errs = append(b.errs, errors.New("For called more than once"))
		return b
	}
	b.forSet = true
	return b.Watches(src, handler.EnqueueObject(), predicates...)
}

// Owns watches a kind the controller's objects own: an event of src enqueues
// the object's controlling owner when that owner is of kind owner (which is
// normally the For kind).
func (b *Builder) Owns(src ports.Source, owner schema.GroupKind, predicates ...predicate.Predicate) *Builder {
	if owner.Kind == "" {
		b.errs = append(b.errs, errors.New("Owns: owner kind is empty"))
	}
	return b.Watches(src, handler.EnqueueOwner(owner), predicates...)
}

// Watches adds any other source, with a mapper of one's choosing.
func (b *Builder) Watches(src ports.Source, m handler.Mapper, predicates ...predicate.Predicate) *Builder {
	b.watches = append(b.watches, Watch{Source: src, Mapper: m, Predicates: predicates})
	return b
}

// Workers sets how many requests are reconciled concurrently (default 1).
func (b *Builder) Workers(n int) *Builder {
	b.workers = n
	return b
}

// WithOptions replaces the Options that came with the Deps, for this
// controller only.
func (b *Builder) WithOptions(o Options) *Builder {
	b.deps.Options = o
	return b
}

// Complete checks the declaration and builds the controller (see [New]).
func (b *Builder) Complete(r ports.Reconciler) (*Controller, error) {
	errs := b.errs
	if !b.forSet {
		errs = append(errs, errors.New("For was not called"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("build controller %q: %w", b.name, err)
	}
	return New(Config{Name: b.name, Workers: b.workers, Watches: b.watches, Reconciler: r}, b.deps)
}
