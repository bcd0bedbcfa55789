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
// watch some milliseconds later. A reconcile of the same request that starts
// within that window would act on the state from before the write: create a
// second Pod, or patch and announce a label again. So each reconcile's
// context carries a writeSet; writers report the resourceVersion the API
// server returned (ports.ObserveWrite), and the controller keeps the newest
// one per request and kind. The next reconcile of that request first waits
// until the watched caches of those kinds have applied those versions:
// usually no wait at all, since the write's own watch event is what queued
// the request again. Deletes are not tracked: client-go returns no
// resourceVersion for them.

// writeSet collects the writes of one reconcile: kind → newest
// resourceVersion.
type writeSet struct {
	mu     sync.Mutex
	byKind map[schema.GroupKind]string
}

// observe is the reconcile's ports.WriteObserver. A reconcile may write
// from several goroutines.
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

// newerVersion returns the later of two resourceVersions, b when they do
// not compare (the later write, as they are observed in order).
func newerVersion(a, b string) string {
	av, errA := strconv.ParseUint(a, 10, 64)
	bv, errB := strconv.ParseUint(b, 10, 64)
	if errA == nil && errB == nil && av > bv {
		return a
	}
	return b
}

// ledger remembers, per request, the writes its caches have yet to apply.
// Entries are dropped once applied: when the request is reconciled again,
// or by a sweep, so that objects reconciled once and never again do not
// stay in memory.
type ledger struct {
	// applied reports whether the cache of kind has applied rv; false
	// only when it knows it has not.
	applied func(kind schema.GroupKind, rv string) bool

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

// sweepLocked drops what the caches have applied. Amortised: the next
// sweep waits until the ledger has doubled.
func (l *ledger) sweepLocked() {
	for req, writes := range l.pending {
		if l.allApplied(writes) {
			delete(l.pending, req)
		}
	}
	l.sweepAt = max(2*len(l.pending), minSweep)
}

func (l *ledger) allApplied(writes map[schema.GroupKind]string) bool {
	for kind, rv := range writes {
		if !l.applied(kind, rv) {
			return false
		}
	}
	return true
}

func (l *ledger) get(req ports.Request) map[schema.GroupKind]string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.pending[req]
}

func (l *ledger) forget(req ports.Request) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.pending, req)
}

func (l *ledger) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.pending)
}

// await waits until the caches have applied the writes recorded for req,
// polling (the wait is normally a few milliseconds, and most often none:
// the watch event of the write is what queued the request again). It
// returns how long it waited, and an error when timeout passed first.
func (l *ledger) await(ctx context.Context, req ports.Request, timeout time.Duration) (time.Duration, error) {
	writes := l.get(req)
	if len(writes) == 0 || l.allApplied(writes) {
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
			return time.Since(start), fmt.Errorf("the cache has not applied this controller's last write (%s) after %s", describe(writes, l.applied), timeout)
		case <-t.C:
		}
		if l.allApplied(writes) {
			l.forget(req)
			return time.Since(start), nil
		}
	}
}

func describe(writes map[schema.GroupKind]string, applied func(kind schema.GroupKind, rv string) bool) string {
	for kind, rv := range writes {
		if !applied(kind, rv) {
			return fmt.Sprintf("%s at resourceVersion %s", kind.String(), rv)
		}
	}
	return "none"
}

// freshnessOf maps kinds to the watched sources, which tell how fresh
// their caches are. A kind written but not watched never blocks.
func freshnessOf(watches []Watch) func(kind schema.GroupKind, rv string) bool {
	byKind := map[schema.GroupKind][]ports.Source{}
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
