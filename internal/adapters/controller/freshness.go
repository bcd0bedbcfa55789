package controller

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/hexagonal-operator/operator/internal/ports"
)

// Read-your-own-writes. A reconcile's writes reach the cache through the
// watch milliseconds later; a reconcile of the same request within that
// window would act on the state from before them (create a second Pod).
// Writers report the resourceVersion the API server returned
// (writes.Observe) to the reconcile's writeSet; the ledger keeps the
// newest per request and kind, and the next reconcile of that request
// first waits until the watched caches of those kinds have applied them:
// usually no wait, since the write's own watch event queued it. Deletes
// return no resourceVersion and are not tracked.

// writeSet collects the writes of one reconcile: kind → newest
// resourceVersion.
type writeSet struct {
	mu     sync.Mutex
	byKind map[schema.GroupKind]string
}

// observe is the reconcile's writes.Observer, safe for concurrent use.
func (w *writeSet) observe(kind schema.GroupKind, resourceVersion string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.byKind == nil {
		w.byKind = map[schema.GroupKind]string{}
	}
	w.byKind[kind] = newerVersion(w.byKind[kind], resourceVersion)
}

func (w *writeSet) snapshot() map[schema.GroupKind]string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.byKind
}

// newerVersion returns the later of two resourceVersions, b (the later
// write) when they do not compare.
func newerVersion(a, b string) string {
	av, errA := strconv.ParseUint(a, 10, 64)
	bv, errB := strconv.ParseUint(b, 10, 64)
	if errA == nil && errB == nil && av > bv {
		return a
	}
	return b
}

// ledger remembers, per request, the writes its caches have yet to apply.
// Entries are dropped once applied: at the request's next reconcile, or by
// a sweep for objects never reconciled again.
type ledger struct {
	applied func(kind schema.GroupKind, rv string) bool // false only when known not

	mu      sync.Mutex
	pending map[ports.Request]map[schema.GroupKind]string
	sweepAt int
}

const minSweep = 256

func newLedger(applied func(kind schema.GroupKind, rv string) bool) *ledger {
	return &ledger{applied: applied, pending: map[ports.Request]map[schema.GroupKind]string{}, sweepAt: minSweep}
}

// record merges the writes of a reconcile of req.
func (l *ledger) record(req ports.Request, writes map[schema.GroupKind]string) {
	if len(writes) == 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	cur := l.pending[req]
	if cur == nil {
		cur = make(map[schema.GroupKind]string, len(writes))
		l.pending[req] = cur
	}
	for kind, rv := range writes {
		cur[kind] = newerVersion(cur[kind], rv)
	}
	if len(l.pending) >= l.sweepAt {
		l.sweepLocked()
	}
}

// sweepLocked drops what the caches have applied; the next sweep waits
// until the ledger has doubled.
func (l *ledger) sweepLocked() {
	for req, writes := range l.pending {
		if l.unapplied(writes) == "" {
			delete(l.pending, req)
		}
	}
	l.sweepAt = max(2*len(l.pending), minSweep)
}

// unapplied describes a write the caches have not applied, "" if none.
func (l *ledger) unapplied(writes map[schema.GroupKind]string) string {
	for kind, rv := range writes {
		if !l.applied(kind, rv) {
			return fmt.Sprintf("%s at resourceVersion %s", kind.String(), rv)
		}
	}
	return ""
}

func (l *ledger) forget(req ports.Request) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.pending, req)
}

// await waits, polling, until the caches have applied the writes recorded
// for req. It returns how long it waited, and an error when timeout passed
// first.
func (l *ledger) await(ctx context.Context, req ports.Request, timeout time.Duration) (time.Duration, error) {
	l.mu.Lock()
	writes := l.pending[req]
	l.mu.Unlock()
	if l.unapplied(writes) == "" {
		l.forget(req)
		return 0, nil
	}
	start := time.Now()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for pause := time.Millisecond; ; pause = min(2*pause, 50*time.Millisecond) {
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return time.Since(start), fmt.Errorf("wait for the cache to apply this controller's last write: %w", ctx.Err())
		case <-deadline.C:
			t.Stop()
			return time.Since(start), fmt.Errorf("the cache has not applied this controller's last write (%s) after %s", l.unapplied(writes), timeout)
		case <-t.C:
		}
		if l.unapplied(writes) == "" {
			l.forget(req)
			return time.Since(start), nil
		}
	}
}

// freshnessOf asks the watched sources of a kind whether their caches have
// applied a write; a kind written but not watched never blocks.
func freshnessOf(watches []Watch) func(kind schema.GroupKind, rv string) bool {
	byKind := map[schema.GroupKind][]Source{}
	for _, w := range watches {
		gk := w.Source.GroupKind()
		byKind[gk] = append(byKind[gk], w.Source)
	}
	return func(kind schema.GroupKind, rv string) bool {
		for _, f := range byKind[kind] {
			if !f.HasApplied(rv) {
				return false
			}
		}
		return true
	}
}
