package certs

import (
	"context"
	"math/rand/v2"
	"time"

	"go.uber.org/zap"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
)

// Timing of the target watches.
const (
	// watchTimeout bounds one watch (randomly up to twice as long, so
	// that replicas do not reconnect together).
	watchTimeout = 5 * time.Minute
	// pollInterval: a target that cannot be watched is read instead.
	pollInterval = 750 * time.Millisecond
	// The back-off between attempts to watch again, so that a watch RBAC
	// grants later is picked up without a restart.
	watchRetryFirst = time.Second
	watchRetryMax   = 5 * time.Minute
	// The refreshes that target changes trigger: enough to restore at
	// once, not enough to fight another writer of the bundle.
	restoreQPS   = 0.5
	restoreBurst = 10
)

// watchTarget keeps a watch on t until ctx ends, and polls t while it
// cannot watch.
func (s *SelfIssued) watchTarget(ctx context.Context, t *target) {
	log := s.log.With(zap.String("target", t.String()))
	var differs, failing bool
	retry := watchRetryFirst
	for ctx.Err() == nil {
		// By name, so that RBAC may allow it by resourceName; without a
		// resourceVersion the watch opens with the current state.
		timeout := int64(watchTimeout.Seconds() * (1 + rand.Float64()))
		w, err := t.watch(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", t.name).String(), TimeoutSeconds: &timeout})
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			if !failing {
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
			// Not a busy loop of watches the server ends at once.
			s.pollTarget(ctx, t, &differs, pollInterval)
		}
	}
}

// follow handles w's events until it ends.
func (s *SelfIssued) follow(ctx context.Context, t *target, w watch.Interface, differs *bool) {
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
				return
			}
		}
	}
}

// pollTarget reads t about every pollInterval for d.
func (s *SelfIssued) pollTarget(ctx context.Context, t *target, differs *bool, d time.Duration) {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	wait.JitterUntilWithContext(ctx, func(ctx context.Context) {
		if obj, err := t.get(ctx); err == nil { // errors are the refresh's to report
			s.observe(t, obj, differs)
		}
	}, pollInterval, 0.33, true)
}

// observe asks for a refresh when obj no longer carries the bundle.
func (s *SelfIssued) observe(t *target, obj runtime.Object, differs *bool) {
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
