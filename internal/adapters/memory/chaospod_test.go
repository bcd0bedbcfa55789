package memory_test

import (
	"context"
	"testing"

	chaosv1 "github.com/hexagonal-operator/operator/api/chaos/v1"
	"github.com/hexagonal-operator/operator/internal/adapters/memory"
	"github.com/hexagonal-operator/operator/internal/ports/portstest"
)

func TestChaosPodStoreContract(t *testing.T) {
	t.Parallel()
	portstest.RunChaosPodStore(t, func(*testing.T) portstest.ChaosPodFixture {
		s := memory.NewChaosPodStore()
		return portstest.ChaosPodFixture{
			Namespace: "default",
			Reader:    s,
			Writer:    s,
			Create: func(_ context.Context, obj *chaosv1.ChaosPod) (*chaosv1.ChaosPod, error) {
				return s.Create(obj)
			},
		}
	})
}
