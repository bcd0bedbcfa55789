package logging_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hexagonal-operator/operator/internal/adapters/logging"
)

type ref struct{ ns, name string }

func (r ref) MarshalLog() any { return map[string]string{"namespace": r.ns, "name": r.name} }

func TestNewLogr(t *testing.T) {
	t.Parallel()
	var out syncBuffer
	z, err := logging.New(logging.Options{Level: "2", Output: &out})
	require.NoError(t, err)
	l := logging.NewLogr(z).WithName("client").WithValues("controller", "chaospod")

	l.Info("level zero", "object", ref{"default", "web"})
	l.V(2).Info("level two", "attempt", 3)
	l.V(3).Info("level three")
	l.Error(errors.New("boom"), "failed")

	entries := out.entries(t)
	require.Len(t, entries, 3)
	assert.Equal(t, "level zero", entries[0]["msg"])
	assert.Equal(t, "client", entries[0]["logger"])
	assert.Equal(t, "chaospod", entries[0]["controller"])
	assert.Equal(t, map[string]any{"namespace": "default", "name": "web"}, entries[0]["object"])
	assert.Contains(t, entries[0]["caller"], "logr_test.go", "caller should be the logr call site")

	assert.Equal(t, "level two", entries[1]["msg"])
	assert.Equal(t, "Level(-2)", entries[1]["level"])
	assert.InDelta(t, 3, entries[1]["attempt"], 0)

	assert.Equal(t, "failed", entries[2]["msg"])
	assert.Equal(t, "error", entries[2]["level"])
	assert.Equal(t, "boom", entries[2]["error"])
}

func TestNewLogrEnabled(t *testing.T) {
	t.Parallel()
	z, err := logging.New(logging.Options{Level: "info"})
	require.NoError(t, err)
	l := logging.NewLogr(z)
	assert.True(t, l.V(0).Enabled())
	assert.False(t, l.V(1).Enabled())
}
