package logging

import (
	"slices"
	"sync"
	"sync/atomic"

	"github.com/go-logr/zapr"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"k8s.io/klog/v2"
)

// klog.SetLogger replaces a package variable that every logging goroutine
// reads without a lock, so setting it while another application in the
// process logs would be a data race. klog is pointed, once, at a sink whose
// zap logger is switched atomically: the last attached logger receives
// klog's lines, and with none they are dropped.
var (
	klogOnce    sync.Once
	klogTargets = &loggerStack{}
)

// loggerStack holds the attached loggers; the newest one is current.
type loggerStack struct {
	mu      sync.Mutex // serialises attach and detach
	stack   []*zap.Logger
	current atomic.Pointer[zap.Logger]
}

func (s *loggerStack) push(z *zap.Logger) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stack = append(s.stack, z)
	s.current.Store(z)
}

func (s *loggerStack) remove(z *zap.Logger) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i := slices.Index(s.stack, z); i >= 0 {
		s.stack = slices.Delete(s.stack, i, i+1)
	}
	if n := len(s.stack); n > 0 {
		s.current.Store(s.stack[n-1])
	} else {
		s.current.Store(nil)
	}
}

// RedirectKlog sends klog's output (client-go's) to z, under the name
// "klog", until restore is called. V(n) lines appear when z is at level -n
// or lower (--zap-log-level=n), never above [MaxLibraryVerbosity].
func RedirectKlog(z *zap.Logger) (restore func()) {
	klogOnce.Do(func() {
		current := zap.New(capped{targetCore{}}, zap.AddCaller()).Named("klog")
		klog.SetLoggerWithOptions(zapr.NewLogger(current),
			// Let klog.Background() and klog.FromContext return this logger
			// itself, so V-levels are checked against zap's level.
			klog.ContextualLogger(true),
			klog.FlushLogger(func() {
				if z := klogTargets.current.Load(); z != nil {
					_ = z.Sync()
				}
			}),
		)
	})
	klogTargets.push(z)
	var once sync.Once
	return func() { once.Do(func() { klogTargets.remove(z) }) }
}

// targetCore is the core of the newest attached logger, looked up on every
// entry; with none attached, everything is disabled.
type targetCore struct{ fields []zapcore.Field }

func (t targetCore) core() zapcore.Core {
	z := klogTargets.current.Load()
	if z == nil {
		return zapcore.NewNopCore()
	}
	return z.Core()
}

func (t targetCore) Enabled(l zapcore.Level) bool { return t.core().Enabled(l) }

func (t targetCore) With(fields []zapcore.Field) zapcore.Core {
	return targetCore{append(t.fields[:len(t.fields):len(t.fields)], fields...)}
}

func (t targetCore) Check(ent zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	c := t.core()
	if len(t.fields) > 0 {
		c = c.With(t.fields)
	}
	return c.Check(ent, ce)
}

func (t targetCore) Write(ent zapcore.Entry, fields []zapcore.Field) error {
	return t.core().Write(ent, append(t.fields[:len(t.fields):len(t.fields)], fields...))
}

func (t targetCore) Sync() error { return t.core().Sync() }
