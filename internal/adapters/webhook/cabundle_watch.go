package webhook

import (
	"context"
	"math/rand/v2"
	"time"

	"go.uber.org/zap"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
)

// watchedTarget is a CABundleTarget whose object can be watched, so that a
// bundle wiped by someone else (a re-applied manifest) is written again at
// once instead of on the next refresh.
type watchedTarget interface {
	CABundleTarget
	// watch watches the target's object alone (a metadata.name field
	// selector, which RBAC needs to allow it by resourceName). Without a
	// resourceVersion the API server opens it with the object's current
	// state, so nothing that happened before it is missed.
	watch(ctx context.Context) (watch.Interface, error)
	// get reads the object, for checking it by polling when it cannot be
	// watched.
	get(ctx context.Context) (runtime.Object, error)
	// holds reports whether obj carries bundle everywhere the target
	// writes it. Another object, or one with nowhere to write, holds
	// anything: there is nothing to restore.
	holds(obj runtime.Object, bundle []byte) bool
}

// Timing of the target watches.
const (
	// watchTimeout bounds one watch request (randomly up to twice as
	// long, so that replicas do not reconnect together), which also ends a
	// connection that died without the client noticing.
	watchTimeout = 5 * time.Minute
	// pollInterval is how often a target that cannot be watched is read
	// instead; short enough to restore a wiped bundle within a couple of
	// seconds, with a handful of GETs per second at most.
	pollInterval = 750 * time.Millisecond
	// watchRetryFirst and watchRetryMax bound the back-off between attempts
	// to watch again, so that a watch that RBAC refuses costs few requests
	// and one granted later is picked up without a restart.
	watchRetryFirst = time.Second
	watchRetryMax   = 5 * time.Minute
	// restoreQPS and restoreBurst bound the refreshes that target changes
	// trigger: enough to restore at once, not enough to fight another
	// writer of the bundle as fast as the API server allows.
	restoreQPS   = 0.5
	restoreBurst = 10
)

func watchOptionsTimeout() *int64 {
	s := int64(watchTimeout.Seconds() * (1 + rand.Float64()))
	return &s
}

// watchTarget keeps a watch on t until ctx ends, and polls t while it
// cannot watch.
func (s *SelfCertSource) watchTarget(ctx context.Context, t watchedTarget) {
	log := s.log.With(zap.String("target", t.String()))
	var differs, failing bool
	retry := watchRetryFirst
	for ctx.Err() == nil {
		w, err := t.watch(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			if !failing {
				// Logged once: until the watch works again the target is
				// read every second instead, which keeps the restore quick.
				log.Info("cannot watch CA bundle target, polling it instead", zap.Error(err))
				failing = true
			}
			s.pollTarget(ctx, t, &differs, retry)
			retry = min(2*retry, watchRetryMax)
			continue
		}
		if failing {
			log.Info("watching CA bundle target again")
			failing = false
		}
		retry = watchRetryFirst
		began := time.Now()
		s.watching.Add(1)
		s.follow(ctx, t, w, &differs)
		s.watching.Add(-1)
		w.Stop()
		if time.Since(began) < pollInterval {
			// A watch the server ends at once must not turn into a busy
			// loop of requests.
			s.pollTarget(ctx, t, &differs, pollInterval)
		}
	}
}

// follow handles w's events until it ends.
func (s *SelfCertSource) follow(ctx context.Context, t watchedTarget, w watch.Interface, differs *bool) {
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w.ResultChan():
			if !ok {
				return
			}
			switch ev.Type {
			case watch.Added, watch.Modified:
				s.observe(t, ev.Object, differs)
			case watch.Error:
				// The server ended the watch (its cache restarted, say);
				// the next one starts from the current state.
				return
			}
		}
	}
}

// pollTarget reads t about every pollInterval for d. Read errors are left
// to the refresh, which reports them.
func (s *SelfCertSource) pollTarget(ctx context.Context, t watchedTarget, differs *bool, d time.Duration) {
	end := time.Now().Add(d)
	for {
		if obj, err := t.get(ctx); err == nil {
			s.observe(t, obj, differs)
		}
		next := wait.Jitter(pollInterval, 0.33)
		if time.Until(end) < next {
			next = max(time.Until(end), 0)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(next):
		}
		if !time.Now().Before(end) {
			return
		}
	}
}

// observe asks for a refresh when obj no longer carries the bundle. The
// refresh re-reads the Secret too, so a change that is another replica's
// rotation rather than a wipe makes this replica catch up instead of
// writing an older bundle back.
func (s *SelfCertSource) observe(t watchedTarget, obj runtime.Object, differs *bool) {
	bundle := s.CABundle()
	if bundle == nil || t.holds(obj, bundle) {
		*differs = false
		return
	}
	if !*differs {
		s.log.Info("CA bundle target changed, writing the bundle again", zap.String("target", t.String()))
		*differs = true
	}
	select {
	case s.kick <- struct{}{}:
	default: // a refresh is already due
	}
}
