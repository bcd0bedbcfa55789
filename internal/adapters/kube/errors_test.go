package kube_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/hexagonal-operator/operator/internal/adapters/kube"
	"github.com/hexagonal-operator/operator/internal/ports"
)

func TestTranslateError(t *testing.T) {
	t.Parallel()
	rs := schema.GroupResource{Group: "apps", Resource: "replicasets"}
	rsKind := schema.GroupKind{Group: "apps", Kind: "ReplicaSet"}
	portErrors := []error{ports.ErrNotFound, ports.ErrConflict, ports.ErrAlreadyExists, ports.ErrInvalid, ports.ErrForbidden}

	tests := []struct {
		name string
		err  error
		want error // the one port error expected; nil means none
	}{
		{"not found", apierrors.NewNotFound(rs, "web"), ports.ErrNotFound},
		{"conflict", apierrors.NewConflict(rs, "web", errors.New("stale")), ports.ErrConflict},
		{"already exists", apierrors.NewAlreadyExists(rs, "web"), ports.ErrAlreadyExists},
		{"invalid", apierrors.NewInvalid(rsKind, "web", field.ErrorList{field.Required(field.NewPath("spec"), "")}), ports.ErrInvalid},
		{"bad request", apierrors.NewBadRequest("malformed patch"), ports.ErrInvalid},
		{"entity too large", apierrors.NewRequestEntityTooLargeError("too big"), ports.ErrInvalid},
		{"unsupported media type", apierrors.NewGenericServerResponse(415, "patch", rs, "web", "", 0, false), ports.ErrInvalid},
		{"method not supported", apierrors.NewMethodNotSupported(rs, "patch"), ports.ErrInvalid},
		{"forbidden", apierrors.NewForbidden(rs, "web", errors.New("rbac")), ports.ErrForbidden},
		{"unauthorized", apierrors.NewUnauthorized("token expired"), ports.ErrForbidden},
		{"wrapped api error", fmt.Errorf("during patch: %w", apierrors.NewNotFound(rs, "web")), ports.ErrNotFound},
		{"timeout is transient", apierrors.NewTimeoutError("slow", 1), nil},
		{"throttled is transient", apierrors.NewTooManyRequests("slow down", 1), nil},
		{"internal is transient", apierrors.NewInternalError(errors.New("etcd")), nil},
		{"service unavailable is transient", apierrors.NewServiceUnavailable("restarting"), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := kube.TranslateError(tt.err)
			require.Error(t, got)
			assert.Equal(t, tt.err.Error(), got.Error(), "the API server's message survives")
			assert.Equal(t, tt.err.Error(), ports.Cause(fmt.Errorf("create pods ns/web: %w", got)), "the domain finds it under the writer's context")
			var status apierrors.APIStatus
			assert.False(t, errors.As(got, &status), "no API error crosses the port")
			for _, pe := range portErrors {
				assert.Equal(t, errors.Is(tt.want, pe), errors.Is(got, pe), "errors.Is(%v)", pe)
			}
		})
	}
}

func TestTranslateErrorLeavesOtherErrorsAlone(t *testing.T) {
	t.Parallel()
	assert.NoError(t, kube.TranslateError(nil))
	err := fmt.Errorf("dial: %w", context.Canceled)
	assert.Same(t, err, kube.TranslateError(err))
	assert.ErrorIs(t, kube.TranslateError(err), context.Canceled)
}
