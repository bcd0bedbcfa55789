package greeting

import (
	"context"
	"errors"
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

var errNoObject = errors.New("request has no object")

// Defaulter is the mutating rule for Greetings: it fills in the
// salutation. Build it with NewDefaulter.
type Defaulter struct{}

var _ ports.Mutator[greetingv1.Greeting] = (*Defaulter)(nil)

// NewDefaulter returns the defaulter.
func NewDefaulter() *Defaulter { return &Defaulter{} }

// Mutate sets an empty spec.salutation to [DefaultSalutation], on create
// and on update (so that clearing it restores the default).
func (*Defaulter) Mutate(_ context.Context, req ports.AdmissionRequest[greetingv1.Greeting]) (ports.Mutation[greetingv1.Greeting], error) {
	if req.Operation != ports.OperationCreate && req.Operation != ports.OperationUpdate {
		return ports.Mutation[greetingv1.Greeting]{Verdict: ports.Allow()}, nil
	}
	if req.Object == nil {
		return ports.Mutation[greetingv1.Greeting]{}, fmt.Errorf("default greeting: %s %w", req.Operation, errNoObject)
	}
	if req.Object.Spec.Salutation != "" {
		return ports.Mutation[greetingv1.Greeting]{Verdict: ports.Allow()}, nil
	}
	obj := req.Object.DeepCopy()
	obj.Spec.Salutation = DefaultSalutation
	return ports.Mutation[greetingv1.Greeting]{Verdict: ports.Allow(), Object: obj}, nil
}

// Validator is the validating rule for Greetings. Build it with
// NewValidator.
type Validator struct{}

var _ ports.Validator[greetingv1.Greeting] = (*Validator)(nil)

// NewValidator returns the validator.
func NewValidator() *Validator { return &Validator{} }

// Validate admits a created or updated Greeting whose spec.name has 1 to
// [MaxNameLength] characters and whose spec.salutation has at most
// [MaxSalutationLength]; it refuses any other with a message naming the
// field. Other operations are admitted.
func (*Validator) Validate(_ context.Context, req ports.AdmissionRequest[greetingv1.Greeting]) (ports.Verdict, error) {
	if req.Operation != ports.OperationCreate && req.Operation != ports.OperationUpdate {
		return ports.Allow(), nil
	}
	if req.Object == nil {
		return ports.Verdict{}, fmt.Errorf("validate greeting: %s %w", req.Operation, errNoObject)
	}
	spec := req.Object.Spec
	switch n := utf8.RuneCountInString(spec.Name); {
	case n == 0:
		return ports.Deny("spec.name is required: say whom to greet"), nil
	case n > MaxNameLength:
		return ports.Deny(fmt.Sprintf("spec.name has %d characters, more than %d", n, MaxNameLength)), nil
	}
	if n := utf8.RuneCountInString(spec.Salutation); n > MaxSalutationLength {
		return ports.Deny(fmt.Sprintf("spec.salutation has %d characters, more than %d", n, MaxSalutationLength)), nil
	}
	return ports.Allow(), nil
}
