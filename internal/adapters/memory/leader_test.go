package memory_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/hexagonal-operator/operator/internal/adapters/memory"
)

func TestLeaderElector(t *testing.T) {
	t.Parallel()
	l := memory.NewLeaderElector()
	select {
	case <-l.Elected():
		t.Fatal("a new elector must be a standby")
	default:
	}
	assert.False(t, l.IsLeader())

	l.Elect()
	l.Elect() // idempotent
	select {
	case <-l.Elected():
	default:
		t.Fatal("Elect did not close Elected")
	}
	assert.True(t, l.IsLeader())
}
