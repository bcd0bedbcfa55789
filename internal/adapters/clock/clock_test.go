package clock_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/fx"
	"go.uber.org/fx/fxtest"

	"github.com/hexagonal-operator/operator/internal/adapters/clock"
	"github.com/hexagonal-operator/operator/internal/ports"
)

func TestRealClockFollowsWallClock(t *testing.T) {
	t.Parallel()
	c, err := clock.New()
	require.NoError(t, err)
	before := time.Now()
	now := c.Now()
	after := time.Now()
	assert.False(t, now.Before(before))
	assert.False(t, now.After(after))
}

func TestModuleProvidesClock(t *testing.T) {
	t.Parallel()
	var c ports.Clock
	app := fxtest.New(t, clock.Module, fx.Populate(&c))
	app.RequireStart().RequireStop()
	require.NotNil(t, c)
	assert.WithinDuration(t, time.Now(), c.Now(), time.Minute)
}
