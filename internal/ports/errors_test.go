package ports_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/hexagonal-operator/operator/internal/ports"
)

func TestStoreErrorIsItsPortErrorAndSaysTheStoresWords(t *testing.T) {
	t.Parallel()
	refused := &ports.StoreError{Err: ports.ErrForbidden, Message: `pods "a" is forbidden: denied by policy`}
	tests := []struct {
		name      string
		err       error
		cause     string
		forbidden bool
	}{
		{"nil", nil, "", false},
		{"plain", errors.New("dial tcp: refused"), "dial tcp: refused", false},
		{"store error", refused, `pods "a" is forbidden: denied by policy`, true},
		{"wrapped", fmt.Errorf("create pod ns/a: %w", refused), `pods "a" is forbidden: denied by policy`, true},
		{"terminal", ports.Terminal(fmt.Errorf("create pod ns/a: %w", refused)), `pods "a" is forbidden: denied by policy`, true},
		{"transient", fmt.Errorf("get: %w", &ports.StoreError{Message: "etcd timeout"}), "etcd timeout", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.cause, ports.Cause(tt.err))
			assert.Equal(t, tt.forbidden, errors.Is(tt.err, ports.ErrForbidden))
		})
	}
}
