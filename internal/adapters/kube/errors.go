package kube

import (
	"errors"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/hexagonal-operator/operator/internal/ports"
)

// TranslateError maps a Kubernetes API error onto the port errors:
//
//   - NotFound → ports.ErrNotFound
//   - Conflict → ports.ErrConflict
//   - AlreadyExists → ports.ErrAlreadyExists
//   - Invalid, BadRequest, RequestEntityTooLarge, UnsupportedMediaType,
//     NotAcceptable, MethodNotSupported → ports.ErrInvalid (a retry of the
//     same request cannot succeed)
//   - Forbidden, Unauthorized → ports.ErrForbidden
//
// The result is a *ports.StoreError whose message is the API server's own
// (ports.Cause finds it under the writer's context). Other API errors
// (timeouts, throttling, internal errors) are transient: they keep their
// message but match no port error, so callers retry them.
// Errors that are not API errors, such as a cancelled context or a refused
// connection, are returned unchanged. TranslateError(nil) is nil.
func TranslateError(err error) error {
	var status apierrors.APIStatus
	if err == nil || !errors.As(err, &status) {
		return err
	}
	// A ports.StoreError: errors.Is finds the port error, the message is
	// the API server's, and the apierrors type is deliberately out of
	// reach so that no caller comes to depend on it.
	return &ports.StoreError{Err: portError(err), Message: err.Error()}
}

func portError(err error) error {
	switch {
	case apierrors.IsNotFound(err):
		return ports.ErrNotFound
	case apierrors.IsConflict(err):
		return ports.ErrConflict
	case apierrors.IsAlreadyExists(err):
		return ports.ErrAlreadyExists
	case apierrors.IsInvalid(err), apierrors.IsBadRequest(err),
		apierrors.IsRequestEntityTooLargeError(err), apierrors.IsUnsupportedMediaType(err),
		apierrors.IsNotAcceptable(err), apierrors.IsMethodNotSupported(err):
		return ports.ErrInvalid
	case apierrors.IsForbidden(err), apierrors.IsUnauthorized(err):
		return ports.ErrForbidden
	default:
		return nil
	}
}
