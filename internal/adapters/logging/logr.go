package logging

import (
	"github.com/go-logr/logr"
	"github.com/go-logr/zapr"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// MaxLibraryVerbosity is the highest logr V-level that reaches the log
// through this package's bridges, whatever --zap-log-level says. client-go
// logs every request's URL and headers from V(6) and request and response
// bodies from V(8): the bodies hold the bearer tokens of TokenReviews and
// the private keys of the self-mode Secret, and headers other than
// Authorization are not masked. Nothing above V(5) may therefore be enabled.
const MaxLibraryVerbosity = 5

// NewLogr returns a logr.Logger writing to z (go-logr/zapr: V(n) is zap
// level -n), for libraries that log through logr; V-levels above
// [MaxLibraryVerbosity] are never enabled.
func NewLogr(z *zap.Logger) logr.Logger {
	return zapr.NewLogger(z.WithOptions(zap.WrapCore(func(c zapcore.Core) zapcore.Core { return capped{c} })))
}

// capped disables the zap levels below -MaxLibraryVerbosity. Every V-check
// of a logr logger over it, klog's included, reaches its Enabled.
type capped struct{ zapcore.Core }

func (c capped) Enabled(l zapcore.Level) bool {
	return l >= -MaxLibraryVerbosity && c.Core.Enabled(l)
}

func (c capped) With(fields []zapcore.Field) zapcore.Core { return capped{c.Core.With(fields)} }

func (c capped) Check(ent zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if !c.Enabled(ent.Level) {
		return ce
	}
	return c.Core.Check(ent, ce)
}
