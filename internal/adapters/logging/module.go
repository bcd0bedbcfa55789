package logging

import (
	"context"
	"errors"
	"syscall"

	"go.uber.org/fx"
	"go.uber.org/fx/fxevent"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"k8s.io/klog/v2"
)

// Module provides the operator's *zap.Logger from an [Options] and routes
// klog (client-go) into it while the application runs. Everything logs, so
// the logger is built, and its hook appended, first: klog is redirected
// before anything starts and detached, and the log flushed, last.
var Module = fx.Module("logging",
	fx.Provide(newLogger),
)

func newLogger(lc fx.Lifecycle, opts Options) (*zap.Logger, error) {
	z, err := New(opts)
	if err != nil {
		return nil, err
	}
	var restore func()
	lc.Append(fx.Hook{
		OnStart: func(context.Context) error {
			restore = RedirectKlog(z)
			return nil
		},
		OnStop: func(context.Context) error {
			klog.Flush()
			if restore != nil {
				restore()
			}
			return Sync(z)
		},
	})
	return z, nil
}

// FxLogger sends fx's own events to the operator's logger: one line per
// event at debug level, its errors too: a failed start is returned to main,
// which reports it once on one line. It must be given to fx.New at the top
// level (inside a module it would only cover that module).
var FxLogger = fx.WithLogger(func(z *zap.Logger) fxevent.Logger {
	// fxevent writes its own "caller" field (the constructor or hook);
	// zap's would always point into fxevent and clash with it.
	l := &fxevent.ZapLogger{Logger: z.Named("fx").WithOptions(zap.WithCaller(false))}
	l.UseLogLevel(zapcore.DebugLevel)
	l.UseErrorLevel(zapcore.DebugLevel)
	return l
})

// Sync flushes z, ignoring the errors that syncing a terminal or a pipe
// always returns on Linux.
func Sync(z *zap.Logger) error {
	err := z.Sync()
	if errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOTTY) || errors.Is(err, syscall.EBADF) {
		return nil
	}
	return err
}
