package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A stop is due only once a Pod was started for it: the nextStop a
// ChaosPod is created with (the defaulter's) is replaced when its first
// Pod starts and is never missing; a started Pod's stop is missing until
// its deletion is seen, and then has its lateness.
func TestChaosStopsCountOnlyStartedPods(t *testing.T) {
	t.Parallel()
	base := time.Date(2026, 12, 6, 0, 37, 0, 0, time.UTC)
	windowEnd := base.Add(60 * time.Second)
	created := stopVersion{rv: 10, nextStop: base.Add(59 * time.Second)} // the defaulter's, no Pod yet
	started := stopVersion{rv: 20, nextStop: base.Add(10 * time.Second), started: true}
	restarted := stopVersion{rv: 40, nextStop: windowEnd.Add(time.Second), started: true} // due after the window
	tests := []struct {
		name        string
		deletions   []deletion
		wantMissing int
		wantLate    []time.Duration
	}{
		{name: "no deletion seen", wantMissing: 1},
		{name: "the started Pod's stop seen", deletions: []deletion{{name: "cp", rv: 30, seen: base.Add(10*time.Second + 20*time.Millisecond)}}, wantLate: []time.Duration{20 * time.Millisecond}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			obs := chaosObservation{
				history:   map[string][]stopVersion{"cp": {created, started, restarted}},
				deletions: tt.deletions,
			}

			late, _, missing, err := obs.stops(windowEnd, windowEnd.Add(time.Minute))

			require.NoError(t, err)
			assert.Equal(t, tt.wantMissing, missing)
			assert.Equal(t, tt.wantLate, late)
		})
	}
}

// Stops are grouped by the second they were due, latest tail first, and
// the busiest second is the one with the most stops, the later tail of two
// as busy.
func TestChaosStopSecondsAndTheBusiest(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 12, 6, 9, 0, 0, 0, time.UTC)
	ms := time.Millisecond
	tests := []struct {
		name        string
		late        []time.Duration
		due         []time.Time
		wantSeconds []stopSecond
		wantBusiest stopSecond
	}{
		{name: "no stop"},
		{
			name: "the most stops win over the latest",
			late: []time.Duration{10 * ms, 30 * ms, 90 * ms},
			due:  []time.Time{at, at, at.Add(time.Second)},
			wantSeconds: []stopSecond{
				{at: at.Add(time.Second), n: 1, worst: 90 * ms},
				{at: at, n: 2, worst: 30 * ms},
			},
			wantBusiest: stopSecond{at: at, n: 2, worst: 30 * ms},
		},
		{
			name: "of two as busy, the later tail",
			late: []time.Duration{10 * ms, 50 * ms},
			due:  []time.Time{at, at.Add(time.Second)},
			wantSeconds: []stopSecond{
				{at: at.Add(time.Second), n: 1, worst: 50 * ms},
				{at: at, n: 1, worst: 10 * ms},
			},
			wantBusiest: stopSecond{at: at.Add(time.Second), n: 1, worst: 50 * ms},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()

			seconds := stopSeconds(tt.late, tt.due)

			if len(tt.wantSeconds) == 0 {
				assert.Empty(t, seconds)
			} else {
				assert.Equal(t, tt.wantSeconds, seconds)
			}
			assert.Equal(t, tt.wantBusiest, busiestOf(seconds))
		})
	}
}
