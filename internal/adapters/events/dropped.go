package events

import (
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

// DroppedMetric counts the Events the recorder gave up on, by cause: an
// Event is best-effort, but a dashboard should be able to tell that some
// were lost.
const DroppedMetric = "operator_events_dropped_total"

// Causes of a dropped Event, the `cause` label of DroppedMetric.
const (
	DropNotRunning = "not_running" // recorded before Start or after Stop
	DropInvalid    = "invalid"     // no reference to its object, or an unknown type
	DropRejected   = "rejected"    // the API server refused it (invalid, forbidden)
)

var dropCauses = [...]string{DropNotRunning, DropInvalid, DropRejected}

// dropCounts counts drops per cause without a lock: Eventf calls it on
// the reconcile's path.
type dropCounts [len(dropCauses)]atomic.Uint64

func (d *dropCounts) add(cause string) {
	for i, c := range dropCauses {
		if c == cause {
			d[i].Add(1)
			return
		}
	}
}

// droppedCollector exports the counts; every cause has a series from the
// start, so a rate() over it is defined before the first drop.
type droppedCollector struct {
	desc   *prometheus.Desc
	counts *dropCounts
}

func (c droppedCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c droppedCollector) Collect(ch chan<- prometheus.Metric) {
	for i, cause := range dropCauses {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.CounterValue, float64(c.counts[i].Load()), cause)
	}
}

// DroppedCollector exports DroppedMetric for this recorder.
func (r *Recorder) DroppedCollector() prometheus.Collector {
	return droppedCollector{
		desc:   prometheus.NewDesc(DroppedMetric, "Events the recorder gave up on, by cause.", []string{"cause"}, nil),
		counts: &r.dropped,
	}
}

// Dropped is how many Events were dropped for cause so far.
func (r *Recorder) Dropped(cause string) uint64 {
	for i, c := range dropCauses {
		if c == cause {
			return r.dropped[i].Load()
		}
	}
	return 0
}
