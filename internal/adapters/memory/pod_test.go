package memory_test

import (
	"testing"

	"github.com/hexagonal-operator/operator/internal/adapters/memory"
	"github.com/hexagonal-operator/operator/internal/ports/portstest"
)

func TestPodStoreContract(t *testing.T) {
	t.Parallel()
	portstest.RunPodStore(t, func(*testing.T) portstest.PodFixture {
		s := memory.NewPodStore(nil)
		return portstest.PodFixture{Namespace: "default", Reader: s, Writer: s}
	})
}
