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

	"github.com/hexagonal-operator/operator/internal/lifecycle"
)

// Module provides the operator's *zap.Logger from an [Options] and, in the
// phase lifecycle.Logging (first to start, last to stop), routes klog
// (client-go) into it, then detaches klog and flushes.
var Module = fx.Module("logging",
	fx.Provide(New, klogPart),
)

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

type klogResult struct {
	fx.Out
	Part lifecycle.Part `group:"lifecycle"`
}

// klogPart sends klog to z for the application's life, in the phase
// lifecycle.Logging: first to start, last to stop.
func klogPart(z *zap.Logger) klogResult {
	var restore func()
	return klogResult{Part: lifecycle.Part{
		Name:  "logging",
		Phase: lifecycle.Logging,
		Start: func(context.Context) error {
			restore = RedirectKlog(z)
			return nil
		},
		Stop: func(context.Context) error {
			klog.Flush()
			if restore != nil {
				restore()
			}
			return Sync(z)
		},
	}}
}

// Sync flushes z, ignoring the errors that syncing a terminal or a pipe
// always returns on Linux.
func Sync(z *zap.Logger) error {
	err := z.Sync()
	if errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOTTY) || errors.Is(err, syscall.EBADF) {
		return nil
	}
	return err
}
