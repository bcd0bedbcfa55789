package ports

import "context"

// Operation is what an admission request does to its object, spelled as the
// API server spells it.
type Operation string

// Admission operations.
const (
	OperationCreate  Operation = "CREATE"
	OperationUpdate  Operation = "UPDATE"
	OperationDelete  Operation = "DELETE"
	OperationConnect Operation = "CONNECT"
)

// AdmissionRequest is one admission question about an object of type T,
// already decoded: the admission rules never see an AdmissionReview, JSON or
// HTTP.
//
// The objects belong to the caller. Rules must not modify them; a mutator
// returns a modified copy instead.
type AdmissionRequest[T any] struct {
	Operation Operation
	// Object is the object as it would be stored: set for CREATE and
	// UPDATE, nil for DELETE.
	Object *T
	// OldObject is the stored object: set for UPDATE and DELETE, nil for
	// CREATE.
	OldObject *T
	// Namespace and Name of the object. Name may be empty on CREATE when
	// the client asked for a generated name.
	Namespace, Name string
	// Username is who sent the request to the API server.
	Username string
	// DryRun is true when nothing will be persisted; rules with side
	// effects must not act on such requests.
	DryRun bool
}

// Verdict is the answer to an admission request.
type Verdict struct {
	Allowed bool
	// Message says why the request was denied; the API server shows it to
	// the client. Empty when Allowed.
	Message string
	// Warnings are shown to the client whether or not the request is
	// allowed (kubectl prints them as "Warning: ...").
	Warnings []string
}

// Allow admits a request, with optional warnings.
func Allow(warnings ...string) Verdict {
	return Verdict{Allowed: true, Warnings: warnings}
}

// Deny refuses a request with a message for the client.
func Deny(message string, warnings ...string) Verdict {
	return Verdict{Allowed: false, Message: message, Warnings: warnings}
}

// Mutation is a mutating rule's answer: a verdict and, when the request is
// allowed, the object to admit.
type Mutation[T any] struct {
	Verdict
	// Object is the object to admit: a modified copy of the request's
	// object, or nil when it is admitted unchanged. Ignored on denial.
	Object *T
}

// Mutator knows how to change an object of type T on its way into the
// cluster (a mutating admission rule, controller-runtime's Defaulter).
//
// Mutate never modifies the request's objects. A returned error means the
// rule could not decide (it is reported as an internal error, and the API
// server applies the webhook's failure policy); a refusal is a denied
// [Mutation], not an error.
type Mutator[T any] interface {
	Mutate(ctx context.Context, req AdmissionRequest[T]) (Mutation[T], error)
}

// MutatorFunc is a function that is a [Mutator].
type MutatorFunc[T any] func(ctx context.Context, req AdmissionRequest[T]) (Mutation[T], error)

// Mutate calls f.
func (f MutatorFunc[T]) Mutate(ctx context.Context, req AdmissionRequest[T]) (Mutation[T], error) {
	return f(ctx, req)
}

// Validator knows how to decide whether an object of type T may enter (or
// change in) the cluster (a validating admission rule).
//
// Validate never modifies the request's objects. A returned error means the
// rule could not decide; a refusal is a [Verdict] with Allowed false.
type Validator[T any] interface {
	Validate(ctx context.Context, req AdmissionRequest[T]) (Verdict, error)
}

// ValidatorFunc is a function that is a [Validator].
type ValidatorFunc[T any] func(ctx context.Context, req AdmissionRequest[T]) (Verdict, error)

// Validate calls f.
func (f ValidatorFunc[T]) Validate(ctx context.Context, req AdmissionRequest[T]) (Verdict, error) {
	return f(ctx, req)
}
