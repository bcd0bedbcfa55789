package logging

import (
	"sync"
	"time"

	"go.uber.org/zap/zapcore"
)

// sampler is zap's sampling policy — in each tick, the first `first`
// entries of one level and message are written, then every
// `thereafter`th — with counters made as messages are seen. zap's own
// sampler preallocates 4096 counters for each of 7 levels, held for the
// life of the process, for a logger that writes a handful of distinct
// messages.
//
// The counters live for one tick: the table starts afresh each tick, so it
// holds the messages of the last second only, however many distinct ones
// a dependency logs. Cores made by With share it, as zap's do.
type sampler struct {
	zapcore.Core
	counts *counts
}

type counts struct {
	tick              time.Duration
	first, thereafter uint64
	now               func() time.Time

	mu      sync.Mutex
	since   time.Time
	counter map[sampleKey]uint64
}

type sampleKey struct {
	level zapcore.Level
	msg   string
}

var _ zapcore.Core = (*sampler)(nil)

// newSampler samples core as zapcore.NewSamplerWithOptions(core, tick,
// first, thereafter) does.
func newSampler(core zapcore.Core, tick time.Duration, first, thereafter uint64) *sampler {
	return &sampler{Core: core, counts: &counts{
		tick: tick, first: first, thereafter: thereafter, now: time.Now,
		counter: map[sampleKey]uint64{},
	}}
}

func (s *sampler) With(fields []zapcore.Field) zapcore.Core {
	return &sampler{Core: s.Core.With(fields), counts: s.counts}
}

func (s *sampler) Check(ent zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if !s.Enabled(ent.Level) {
		return ce
	}
	if !s.counts.allow(ent.Level, ent.Message) {
		return ce
	}
	return s.Core.Check(ent, ce)
}

// allow counts one entry and tells whether it is written.
func (c *counts) allow(level zapcore.Level, msg string) bool {
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if now.Sub(c.since) >= c.tick {
		clear(c.counter)
		c.since = now
	}
	k := sampleKey{level, msg}
	n := c.counter[k] + 1
	c.counter[k] = n
	if n <= c.first {
		return true
	}
	return c.thereafter != 0 && (n-c.first)%c.thereafter == 0
}
