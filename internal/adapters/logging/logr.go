package logging

import (
	"fmt"

	"github.com/go-logr/logr"
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

// NewLogr returns a logr.Logger writing to z, for libraries that log through
// logr (client-go's klog among them). V(n) is zap level -n, so a logger at
// verbosity 4 ("--zap-log-level=4") shows client-go's V(4) lines; V-levels
// above [MaxLibraryVerbosity] are never enabled.
func NewLogr(z *zap.Logger) logr.Logger {
	return logr.New(&zapSink{target: func() *zap.Logger { return z }})
}

// zapSink is a logr.LogSink over zap. Its target is looked up on every call
// so the klog bridge can switch loggers; a nil target drops the line.
type zapSink struct {
	target func() *zap.Logger
	names  []string
	fields []zap.Field
	// skip is how many frames lie between the caller and zapSink's
	// methods: logr's own (from Init) plus WithCallDepth's.
	skip int
}

var (
	_ logr.LogSink          = (*zapSink)(nil)
	_ logr.CallDepthLogSink = (*zapSink)(nil)
)

func (s *zapSink) Init(info logr.RuntimeInfo) { s.skip += info.CallDepth }

func (s *zapSink) logger() *zap.Logger {
	z := s.target()
	if z == nil {
		return nil
	}
	// +1 for the zapSink method itself.
	z = z.WithOptions(zap.AddCallerSkip(s.skip + 1))
	for _, n := range s.names {
		z = z.Named(n)
	}
	return z
}

// Enabled maps logr's verbosity onto zap's levels, up to
// MaxLibraryVerbosity. Every klog V-check ends here: klog.Background() and
// klog.FromContext return a logger over this sink, and klog.V(n).Info
// writes through one even when klog's own -v is raised.
func (s *zapSink) Enabled(level int) bool {
	if level > MaxLibraryVerbosity {
		return false
	}
	z := s.target()
	return z != nil && z.Core().Enabled(zapLevel(level))
}

func (s *zapSink) Info(level int, msg string, kv ...any) {
	// Also here: a caller holding the sink may skip Enabled.
	if level > MaxLibraryVerbosity {
		return
	}
	z := s.logger()
	if z == nil {
		return
	}
	if ce := z.Check(zapLevel(level), msg); ce != nil {
		ce.Write(s.withFields(kv)...)
	}
}

func (s *zapSink) Error(err error, msg string, kv ...any) {
	z := s.logger()
	if z == nil {
		return
	}
	if ce := z.Check(zapcore.ErrorLevel, msg); ce != nil {
		ce.Write(append(s.withFields(kv), zap.Error(err))...)
	}
}

func (s *zapSink) WithValues(kv ...any) logr.LogSink {
	c := *s
	c.fields = s.withFields(kv)
	return &c
}

func (s *zapSink) WithName(name string) logr.LogSink {
	c := *s
	c.names = append(c.names[:len(c.names):len(c.names)], name)
	return &c
}

func (s *zapSink) WithCallDepth(depth int) logr.LogSink {
	c := *s
	c.skip += depth
	return &c
}

func (s *zapSink) withFields(kv []any) []zap.Field {
	fields := make([]zap.Field, len(s.fields), len(s.fields)+len(kv)/2)
	copy(fields, s.fields)
	for i := 0; i < len(kv); {
		if f, ok := kv[i].(zap.Field); ok {
			fields = append(fields, f)
			i++
			continue
		}
		if i == len(kv)-1 {
			fields = append(fields, zap.Any("ignored", kv[i]))
			break
		}
		key, ok := kv[i].(string)
		if !ok {
			key = fmt.Sprint(kv[i])
		}
		v := kv[i+1]
		if m, ok := v.(logr.Marshaler); ok {
			v = m.MarshalLog()
		}
		fields = append(fields, zap.Any(key, v))
		i += 2
	}
	return fields
}

// zapLevel turns logr's V(n) into zap's level -n, within int8.
func zapLevel(v int) zapcore.Level {
	return zapcore.Level(-min(max(v, 0), 127))
}
