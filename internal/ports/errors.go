package ports

import "errors"

// Port errors. Adapters translate their own failures into these so the domain
// can decide what to do without knowing which adapter answered.
var (
	// ErrNotFound: the object does not exist (or no longer does).
	ErrNotFound = errors.New("not found")
	// ErrConflict: the write was based on a stale version of the object.
	ErrConflict = errors.New("conflict")
	// ErrAlreadyExists: a create found an object of that name.
	ErrAlreadyExists = errors.New("already exists")
	// ErrInvalid: the store rejected the object as invalid; retrying the
	// same write cannot succeed.
	ErrInvalid = errors.New("invalid")
	// ErrForbidden: the operator is not allowed to do this.
	ErrForbidden = errors.New("forbidden")
)

// StoreError is a failure as the store reported it: errors.Is finds Err,
// one of the sentinels above (nil when none fits, as for a transient
// failure), and Error is the store's own message, for example the API
// server's reason for refusing a request, an admission policy's message
// included. Adapters return it so that the domain can tell users why
// without knowing which adapter answered.
type StoreError struct {
	Err     error
	Message string
}

func (e *StoreError) Error() string { return e.Message }
func (e *StoreError) Unwrap() error { return e.Err }

// Cause is what the store said in err: the Message of the [StoreError] it
// wraps, else err's whole text. Cause(nil) is "".
func Cause(err error) string {
	if err == nil {
		return ""
	}
	var s *StoreError
	if errors.As(err, &s) && s.Message != "" {
		return s.Message
	}
	return err.Error()
}
