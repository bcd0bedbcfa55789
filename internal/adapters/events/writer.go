package events

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"go.uber.org/zap"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
)

// writeTries bounds the attempts at one write. client-go tries 12 times,
// 10 s apart, from a goroutine per Event; here a retrying write holds one
// of the few writers, so it gives up after ~1.5 s of an API server away
// and lets the queue move (Events are best effort).
const writeTries = 3

// outcome is how a write ended.
type outcome int

const (
	written  outcome = iota
	rejected         // the API server will not take it: never try again
	gaveUp           // tries exhausted, Stop gave up, or already there
)

// work is one writer: it writes the entries of the queue until Stop
// closes it.
func (rn *run) work() {
	defer rn.workers.Done()
	for e := range rn.queue {
		rn.drain(e)
	}
}

// drain writes e until its written count reaches the one asked for, which
// observe and the sweeper may raise while a write is in flight: one
// writer per entry, so the writes of an Event never race each other.
func (rn *run) drain(e *entry) {
	for {
		rn.mu.Lock()
		if e.failed || e.want <= e.done || rn.ctx.Err() != nil {
			e.pending = false
			rn.mu.Unlock()
			return
		}
		ev := rn.event(e)
		count, exists := e.count, e.done > 0
		rn.mu.Unlock()

		res := rn.write(ev, exists)
		rn.lastWrite.Store(time.Now().UnixNano())

		rn.mu.Lock()
		if res == rejected {
			e.failed = true
		} else {
			e.done = count
			e.writtenAt = rn.r.clock.Now()
		}
		rn.mu.Unlock()
	}
}

// write writes ev: a patch of its series when the Event exists, else a
// create; transient failures are retried with a doubling, jittered pause.
func (rn *run) write(ev *eventsv1.Event, exists bool) outcome {
	// The Event's fields only for a line that is written: most writes log
	// nothing, and With copies the logger's core.
	log := func() *zap.Logger {
		return rn.r.log.With(zap.String("reason", ev.Reason), zap.String("name", ev.Name), zap.String("namespace", ev.Namespace))
	}
	pause := rn.r.retryAfter
	for try := 1; ; try++ {
		retry, err := rn.writeOnce(ev, exists)
		switch {
		case err == nil:
			return written
		case rn.ctx.Err() != nil:
			rn.r.dropped.add(DropStopped)
			log().Debug("event abandoned, recorder stopped", zap.Error(err))
			return gaveUp
		case !retry && apierrors.IsAlreadyExists(err):
			// Most likely a retried create whose first try got through
			// unanswered: the Event is there, and its series can patch it.
			log().Debug("event dropped, already exists", zap.Error(err))
			return gaveUp
		case !retry:
			rn.r.dropped.add(DropRejected)
			log().Warn("event rejected", zap.Error(err))
			return rejected
		case try >= writeTries:
			rn.r.dropped.add(DropWriteFailed)
			log().Warn("event dropped, write kept failing", zap.Int("tries", try), zap.Error(err))
			return gaveUp
		}
		log().Debug("event write failed, retrying", zap.Int("try", try), zap.Error(err))
		t := time.NewTimer(pause + rand.N(pause/4+1))
		select {
		case <-t.C:
		case <-rn.ctx.Done():
			t.Stop()
			rn.r.dropped.add(DropStopped)
			return gaveUp
		}
		pause *= 2
	}
}

// writeOnce makes one attempt and tells whether a failure is worth
// another.
func (rn *run) writeOnce(ev *eventsv1.Event, exists bool) (retry bool, err error) {
	events := rn.r.client.EventsV1().Events(ev.Namespace)
	if exists {
		patch, err := json.Marshal(seriesPatch{Series: ev.Series})
		if err != nil {
			return false, fmt.Errorf("patch event %s/%s: %w", ev.Namespace, ev.Name, err)
		}
		_, err = events.Patch(rn.ctx, ev.Name, types.MergePatchType, patch, metav1.PatchOptions{})
		if !apierrors.IsNotFound(err) {
			if err != nil {
				err = fmt.Errorf("patch event %s/%s: %w", ev.Namespace, ev.Name, err)
			}
			return transient(err), err
		}
		// Gone (deleted, expired by the API server's event TTL, or its
		// creation was given up on): create it again, series and all.
	}
	if _, err := events.Create(rn.ctx, ev, metav1.CreateOptions{}); err != nil {
		// After a patch found nothing, an Event that now exists was
		// created in between: patching it is worth another try.
		return transient(err) || (exists && apierrors.IsAlreadyExists(err)), fmt.Errorf("create event %s/%s: %w", ev.Namespace, ev.Name, err)
	}
	return false, nil
}

// seriesPatch is a JSON merge patch that sets an Event's series only.
type seriesPatch struct {
	Series *eventsv1.EventSeries `json:"series"`
}

// transient tells the failures a later try may get past: the API server
// unreachable, overloaded or failing. Anything it answered otherwise
// (invalid, forbidden, already exists, namespace gone) would be answered
// the same again.
func transient(err error) bool {
	if err == nil {
		return false
	}
	var construct *rest.RequestConstructionError
	if errors.As(err, &construct) {
		return false
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return true // transport
	}
	return apierrors.IsTooManyRequests(err) || apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err) ||
		apierrors.IsServiceUnavailable(err) || apierrors.IsInternalError(err) || apierrors.IsUnexpectedServerError(err)
}
