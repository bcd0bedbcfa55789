package logging

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

func TestSamplerWritesTheFirstThenEveryNthPerLevelAndMessage(t *testing.T) {
	t.Parallel()
	obs, logs := observer.New(zapcore.DebugLevel)
	s := newSampler(obs, time.Second, 3, 4)
	now := time.Unix(1000, 0)
	s.counts.now = func() time.Time { return now }
	log := zap.New(s).With(zap.String("controller", "replicaset"))

	for range 12 {
		log.Info("hot")
	}
	log.Warn("hot") // another level counts apart
	log.Info("cold")
	// 3 first, then the 7th and 11th of 12.
	assert.Equal(t, 3+2, logs.FilterMessage("hot").FilterLevelExact(zapcore.InfoLevel).Len())
	assert.Equal(t, 1, logs.FilterMessage("hot").FilterLevelExact(zapcore.WarnLevel).Len())
	assert.Equal(t, 1, logs.FilterMessage("cold").Len())
	assert.Equal(t, "replicaset", logs.All()[0].ContextMap()["controller"], "With keeps the fields")

	now = now.Add(time.Second)
	log.Info("hot")
	assert.Equal(t, 6, logs.FilterMessage("hot").FilterLevelExact(zapcore.InfoLevel).Len(), "a new tick starts counting afresh")
	assert.Len(t, s.counts.counter, 1, "only this tick's messages are held")
}

func TestSamplerSkipsDisabledLevelsWithoutCounting(t *testing.T) {
	t.Parallel()
	obs, logs := observer.New(zapcore.InfoLevel)
	s := newSampler(obs, time.Second, 1, 0)
	log := zap.New(s)
	log.Debug("quiet")
	log.Info("once")
	log.Info("once")
	assert.Equal(t, 1, logs.Len(), "thereafter 0 drops every entry after the first")
	assert.NotContains(t, s.counts.counter, sampleKey{zapcore.DebugLevel, "quiet"})
}
