package ports

import "context"

// Defaulter knows how to fill in an object of type T on its way into the
// cluster (a mutating admission rule, controller-runtime's Defaulter).
//
// The webhook adapter calls Default only for the operations its webhook is
// registered for, with a decoded object that is the rule's own to change;
// it turns the change into a JSON patch. An error made by [Denied] refuses
// the request; any other error means the rule could not decide, and the
// API server applies the webhook's failure policy.
type Defaulter[T any] interface {
	Default(ctx context.Context, obj T) (Warnings, error)
}

// Validator knows how to decide whether an object of type T may be
// created, changed or deleted (a validating admission rule,
// controller-runtime's Validator).
//
// The webhook adapter calls only the method of the request's operation,
// and only for the operations its webhook is registered for; every object
// it passes is set. Errors mean what they mean for a [Defaulter].
type Validator[T any] interface {
	ValidateCreate(ctx context.Context, obj T) (Warnings, error)
	ValidateUpdate(ctx context.Context, oldObj, newObj T) (Warnings, error)
	ValidateDelete(ctx context.Context, obj T) (Warnings, error)
}

// Warnings are shown to the client whether or not the request is admitted
// (kubectl prints each as "Warning: ...").
type Warnings []string

// DeniedError is an admission rule's refusal: the request is denied with
// Message, which the API server shows to the client.
type DeniedError struct{ Message string }

func (e *DeniedError) Error() string { return e.Message }

// Denied refuses an admission request with a message for the client.
// The webhook adapter finds it with errors.As, so it may be wrapped.
func Denied(message string) error { return &DeniedError{Message: message} }

// Operation is what an admission request does to its object, spelled as
// the API server spells it.
type Operation string

// Admission operations.
const (
	OperationCreate  Operation = "CREATE"
	OperationUpdate  Operation = "UPDATE"
	OperationDelete  Operation = "DELETE"
	OperationConnect Operation = "CONNECT"
)

// AdmissionRequest is what a rule may need to know of the request beyond
// its objects. The webhook adapter puts it in the rule's context; read it
// with [AdmissionRequestFromContext].
type AdmissionRequest struct {
	Operation Operation
	// Namespace and Name of the object. Name may be empty on CREATE when
	// the client asked for a generated name.
	Namespace, Name string
	// Username is who sent the request to the API server.
	Username string
	// DryRun is true when nothing will be persisted; rules with side
	// effects must not act on such requests.
	DryRun bool
}

type admissionRequestKey struct{}

// NewContextWithAdmissionRequest returns a context that carries req.
func NewContextWithAdmissionRequest(ctx context.Context, req AdmissionRequest) context.Context {
	return context.WithValue(ctx, admissionRequestKey{}, req)
}

// AdmissionRequestFromContext returns the request ctx carries; ok is false
// outside an admission request.
func AdmissionRequestFromContext(ctx context.Context) (req AdmissionRequest, ok bool) {
	req, ok = ctx.Value(admissionRequestKey{}).(AdmissionRequest)
	return req, ok
}
