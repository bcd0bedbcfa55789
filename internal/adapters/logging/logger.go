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

// Options are kubebuilder's --zap-* flags. The zero value is production
// logging: JSON, info level, stack traces on errors.
type Options struct {
	// Level is "debug", "info", "warn", "error", or a verbosity n >= 0
	// that enables logr's V(0)..V(n) (zap level -n), as kubebuilder's
	// --zap-log-level; the libraries' lines stop at MaxLibraryVerbosity
	// however large n is. Empty means the mode's default: debug with
	// Devel, info without.
	Level string
	// Encoder is "json" or "console"; empty means the mode's default:
	// console with Devel, json without.
	Encoder string
	// Devel is kubebuilder's --zap-devel: console encoding, debug level,
	// stack traces from warnings up, and DPanic panics. Explicit Level,
	// Encoder and StacktraceLevel still win.
	Devel bool
	// StacktraceLevel is kubebuilder's --zap-stacktrace-level: lines at
	// this level and above carry a stack trace. "debug", "info", "warn",
	// "error" or "panic"; empty means the mode's default: warn with Devel,
	// error without, as controller-runtime.
	StacktraceLevel string
	// TimeEncoding is kubebuilder's --zap-time-encoding, for both
	// encoders: "epoch", "millis", "nano" (or "nanos"), "iso8601",
	// "rfc3339" or "rfc3339nano"; empty means rfc3339, controller-runtime's
	// default.
	TimeEncoding string
	// Output receives the log lines; nil means standard error.
	Output io.Writer
}

// New builds the operator's logger. It returns an error naming the value
// when Level or Encoder is not one it knows.
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
	if encoder == "" {
		encoder = EncoderJSON
		if opts.Devel {
			encoder = EncoderConsole
		}
	}
	// The encoder config follows the encoding, not the mode: JSON keeps the
	// keys log pipelines expect (ts, level, msg), console is for people.
	var enc zapcore.Encoder
	switch encoder {
	case EncoderJSON:
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

// ParseLevel reads a --zap-log-level value; empty means debug when devel,
// info otherwise. A verbosity above 127 is clamped: zap levels are int8.
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

// ParseStacktraceLevel reads a --zap-stacktrace-level value; empty means
// warn when devel, error otherwise, as controller-runtime's defaults.
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

// ParseTimeEncoding reads a --zap-time-encoding value; empty means
// rfc3339, controller-runtime's default. controller-runtime documents
// "nano" and parses "nanos": both are taken.
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
