package greeting

import (
	"context"
	"fmt"
	"unicode/utf8"

	greetingv1 "github.com/hexagonal-operator/operator/examples/greeting/api/v1"
	"github.com/hexagonal-operator/operator/internal/ports"
)

// Admission limits and defaults.
const (
	// DefaultSalutation is the salutation of a Greeting that names none.
	DefaultSalutation = "Hello"
	// MaxNameLength is the most characters spec.name may have (a DNS
	// label's length).
	MaxNameLength = 63
	// MaxSalutationLength is the most characters spec.salutation may have.
	MaxSalutationLength = 32
)

// Defaulter is the mutating rule for Greetings: it fills in the
// salutation, on create and on update (so that clearing it restores the
// default). Build it with NewDefaulter.
type Defaulter struct{}

var _ ports.Defaulter[*greetingv1.Greeting] = (*Defaulter)(nil)

// NewDefaulter returns the defaulter.
func NewDefaulter() *Defaulter { return &Defaulter{} }

// Default sets an empty spec.salutation to [DefaultSalutation].
func (*Defaulter) Default(_ context.Context, g *greetingv1.Greeting) (ports.Warnings, error) {
	if g.Spec.Salutation == "" {
		g.Spec.Salutation = DefaultSalutation
	}
	return nil, nil
}

// Validator is the validating rule for Greetings: spec.name has 1 to
// [MaxNameLength] characters and spec.salutation at most
// [MaxSalutationLength]; any other Greeting is refused with a message
// naming the field. Build it with NewValidator.
type Validator struct{}

var _ ports.Validator[*greetingv1.Greeting] = (*Validator)(nil)

// NewValidator returns the validator.
func NewValidator() *Validator { return &Validator{} }

// ValidateCreate checks the spec.
func (*Validator) ValidateCreate(_ context.Context, g *greetingv1.Greeting) (ports.Warnings, error) {
	switch n := utf8.RuneCountInString(g.Spec.Name); {
	case n == 0:
		return nil, ports.Denied("spec.name is required: say whom to greet")
	case n > MaxNameLength:
		return nil, ports.Denied(fmt.Sprintf("spec.name has %d characters, more than %d", n, MaxNameLength))
	}
	if n := utf8.RuneCountInString(g.Spec.Salutation); n > MaxSalutationLength {
		return nil, ports.Denied(fmt.Sprintf("spec.salutation has %d characters, more than %d", n, MaxSalutationLength))
	}
	return nil, nil
}

// ValidateUpdate checks the new spec, as ValidateCreate does.
func (v *Validator) ValidateUpdate(ctx context.Context, _, g *greetingv1.Greeting) (ports.Warnings, error) {
	return v.ValidateCreate(ctx, g)
}

// ValidateDelete admits every deletion (the webhook is not registered for
// them).
func (*Validator) ValidateDelete(context.Context, *greetingv1.Greeting) (ports.Warnings, error) {
	return nil, nil
}
