package kube

import (
	"errors"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/hexagonal-operator/operator/internal/ports"
)

// TranslateError maps a Kubernetes API error onto a *ports.StoreError with
// the API server's message (ports.Cause finds it) and the port error of
// portError; transient API errors match none, so callers retry them. Other
// errors (a cancelled context, a refused connection) pass unchanged.
func TranslateError(err error) error {
	var status apierrors.APIStatus
	if err == nil || !errors.As(err, &status) {
		return err
	}
	return &ports.StoreError{Err: portError(err), Message: err.Error()}
}

// portError is the port error of an API error; ErrInvalid for the requests
// whose retry cannot succeed.
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
