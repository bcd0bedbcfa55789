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
