package events

import (
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// DroppedMetric counts the Events the recorder gave up on, by cause.
const DroppedMetric = "operator_events_dropped_total"

// Causes of a dropped Event, the `cause` label of DroppedMetric.
const (
	DropNotRunning = "not_running" // recorded before Start or after Stop
	DropInvalid    = "invalid"     // no reference to its object, or an unknown type
	DropRejected   = "rejected"    // the API server refused it (invalid, forbidden)
	DropOverflow   = "overflow"    // QueueLength Events were already waiting
)

// newDropped makes DroppedMetric with a series per cause from the start,
// so that a rate() over it is defined before the first drop.
func newDropped() *prometheus.CounterVec {
	v := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: DroppedMetric,
		Help: "Events the recorder gave up on, by cause.",
	}, []string{"cause"})
	for _, c := range []string{DropNotRunning, DropInvalid, DropRejected, DropOverflow} {
		v.WithLabelValues(c)
	}
	return v
}

// DroppedCollector exports DroppedMetric for this recorder.
func (r *Recorder) DroppedCollector() prometheus.Collector { return r.dropped }

// Dropped is how many Events were dropped for cause so far.
func (r *Recorder) Dropped(cause string) uint64 {
	var m dto.Metric
	if err := r.dropped.WithLabelValues(cause).Write(&m); err != nil {
		return 0
	}
	return uint64(m.GetCounter().GetValue())
}
