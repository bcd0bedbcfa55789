package logging

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// Encoders accepted by [Options.Encoder].
const (
	EncoderJSON    = "json"
	EncoderConsole = "console"
)

// Options are kubebuilder's --zap-* flags, with their meaning; empty means
// the mode's default, as controller-runtime's. The zero value is production
// logging: JSON, info level, stack traces on errors. A verbosity Level n
// enables logr's V(0)..V(n) (zap level -n), the libraries' lines stopping
// at MaxLibraryVerbosity. Devel also makes DPanic panic.
type Options struct {
	Level, Encoder  string
	Devel           bool
	StacktraceLevel string
	TimeEncoding    string
	// Output receives the log lines; nil means standard error.
	Output io.Writer
}

// New builds the operator's logger, or an error naming the value it does
// not know.
func New(opts Options) (*zap.Logger, error) {
	level, err := ParseLevel(opts.Level, opts.Devel)
	if err != nil {
		return nil, err
	}
	stack, err := ParseStacktraceLevel(opts.StacktraceLevel, opts.Devel)
	if err != nil {
		return nil, err
	}
	encodeTime, err := ParseTimeEncoding(opts.TimeEncoding)
	if err != nil {
		return nil, err
	}
	encoder := opts.Encoder
	if encoder == "" && opts.Devel {
		encoder = EncoderConsole
	}
	// The encoder config follows the encoding, not the mode: JSON keeps the
	// keys log pipelines expect (ts, level, msg), console is for people.
	var enc zapcore.Encoder
	switch encoder {
	case "", EncoderJSON:
		cfg := zap.NewProductionEncoderConfig()
		cfg.EncodeTime = encodeTime
		enc = zapcore.NewJSONEncoder(cfg)
	case EncoderConsole:
		cfg := zap.NewDevelopmentEncoderConfig()
		cfg.EncodeTime = encodeTime
		enc = zapcore.NewConsoleEncoder(cfg)
	default:
		return nil, fmt.Errorf("invalid log encoder %q: must be %s or %s", opts.Encoder, EncoderJSON, EncoderConsole)
	}
	var out zapcore.WriteSyncer = zapcore.Lock(os.Stderr)
	if opts.Output != nil {
		out = zapcore.Lock(zapcore.AddSync(opts.Output))
	}
	core := zapcore.NewCore(enc, out, zap.NewAtomicLevelAt(level))
	zopts := []zap.Option{zap.AddCaller(), zap.ErrorOutput(out), zap.AddStacktrace(stack)}
	if opts.Devel {
		zopts = append(zopts, zap.Development())
	} else {
		// As controller-runtime in production: a hot loop logging the same
		// line cannot flood the output.
		core = zapcore.NewSamplerWithOptions(core, time.Second, 100, 100)
	}
	return zap.New(core, zopts...), nil
}

// ParseLevel reads a --zap-log-level value. A verbosity above 127 is
// clamped: zap levels are int8.
func ParseLevel(s string, devel bool) (zapcore.Level, error) {
	if l, ok := namedLevel(s, devel, zapcore.DebugLevel, zapcore.ErrorLevel); ok {
		return l, nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < 0 {
		return 0, fmt.Errorf("invalid log level %q: must be debug, info, warn, error or a non-negative integer verbosity", s)
	}
	return zapcore.Level(-min(n, 127)), nil
}

// ParseStacktraceLevel reads a --zap-stacktrace-level value.
func ParseStacktraceLevel(s string, devel bool) (zapcore.Level, error) {
	if l, ok := namedLevel(s, devel, zapcore.WarnLevel, zapcore.PanicLevel); ok {
		return l, nil
	}
	return 0, fmt.Errorf("invalid stacktrace level %q: must be debug, info, warn, error or panic", s)
}

// namedLevel reads a level by zap's name for it, from debug up to highest
// (dpanic excepted: the flags do not offer it); empty is develDefault when
// devel, else the level above it.
func namedLevel(s string, devel bool, develDefault, highest zapcore.Level) (zapcore.Level, bool) {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "" {
		if devel {
			return develDefault, true
		}
		return develDefault + 1, true
	}
	l, err := zapcore.ParseLevel(s)
	return l, err == nil && l <= highest && l != zapcore.DPanicLevel
}

// ParseTimeEncoding reads a --zap-time-encoding value. controller-runtime
// documents "nano" and parses "nanos": both are taken.
func ParseTimeEncoding(s string) (zapcore.TimeEncoder, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "rfc3339":
		return zapcore.RFC3339TimeEncoder, nil
	case "rfc3339nano":
		return zapcore.RFC3339NanoTimeEncoder, nil
	case "iso8601":
		return zapcore.ISO8601TimeEncoder, nil
	case "millis":
		return zapcore.EpochMillisTimeEncoder, nil
	case "nano", "nanos":
		return zapcore.EpochNanosTimeEncoder, nil
	case "epoch":
		return zapcore.EpochTimeEncoder, nil
	}
	return nil, fmt.Errorf("invalid time encoding %q: must be epoch, millis, nano, iso8601, rfc3339 or rfc3339nano", s)
}
