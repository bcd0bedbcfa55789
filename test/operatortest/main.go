package operatortest

import (
	"testing"

	"go.uber.org/goleak"
	"go.uber.org/zap"

	"github.com/hexagonal-operator/operator/internal/adapters/logging"
)

// Main is the TestMain of a package whose tests start operators with
// [Start]. klog's logger is process-wide and set without a lock, so it
// installs the operator's switchable sink once, before parallel tests
// start clients that log, rather than from the first operator's start
// hook; it stays for the whole process. Then it runs the tests and fails
// the package on goroutines left running, except those of
// [IgnoredGoroutines].
func Main(m *testing.M) {
	_ = logging.RedirectKlog(zap.NewNop())
	goleak.VerifyTestMain(m, IgnoredGoroutines()...)
}

// IgnoredGoroutines are the goroutines that live for the process once an
// operator has run: klog's flush daemon and client-go's shared watch
// machinery and connections.
func IgnoredGoroutines() []goleak.Option {
	return []goleak.Option{
		goleak.IgnoreTopFunction("k8s.io/klog/v2.(*flushDaemon).run.func1"),
		goleak.IgnoreAnyFunction("k8s.io/apimachinery/pkg/watch.(*Broadcaster).loop"),
		goleak.IgnoreAnyFunction("k8s.io/client-go/util/workqueue.(*Typed[...]).updateUnfinishedWorkLoop"),
		goleak.IgnoreAnyFunction("net/http.(*persistConn).writeLoop"),
		goleak.IgnoreAnyFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreAnyFunction("internal/poll.runtime_pollWait"),
	}
}
