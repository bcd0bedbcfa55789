package main

import (
	"slices"
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

// Each ChaosPod's Pod is created once at its start and once after every
// stop, never otherwise: created counts the first creations and the
// replacements of the stops due in the window, and anything more or fewer
// fails, but for a Pod stopped after the cut, still in flight.
func TestChaosCreationsFollowTheStops(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 12, 6, 9, 0, 0, 0, time.UTC)
	at := t0.Add
	windowEnd, cut := at(60*time.Second), at(75*time.Second)
	// The ChaosPod's nextStop: the defaulter's, then one per Pod.
	history := []stopVersion{
		{rv: 10, nextStop: at(5 * time.Second)},
		{rv: 20, nextStop: at(10 * time.Second), started: true},
		{rv: 40, nextStop: at(20 * time.Second), started: true},
		{rv: 60, nextStop: at(70 * time.Second), started: true},
	}
	created := func(rv uint64, d time.Duration) podEvent { return podEvent{created: true, rv: rv, seen: at(d)} }
	deleted := func(rv uint64, d time.Duration) podEvent { return podEvent{rv: rv, seen: at(d)} }
	ms := time.Millisecond
	// Started, stopped at 10 s and 20 s and replaced each time: in the
	// window, so both replacements count.
	twoStops := []podEvent{created(15, 100*ms), deleted(30, 10020*ms), created(35, 10300*ms), deleted(50, 20010*ms), created(55, 20200*ms)}
	tests := []struct {
		name        string
		names       []string
		lives       map[string][]podEvent
		wantCreated int
		wantErr     string
	}{
		{name: "every stop replaced", names: []string{"a"}, lives: map[string][]podEvent{"a": twoStops}, wantCreated: 3},
		{
			name:  "a stop due after the window replaced, not counted",
			names: []string{"a"}, lives: map[string][]podEvent{"a": append(slices.Clone(twoStops), deleted(70, 70020*ms), created(75, 70300*ms))},
			wantCreated: 3,
		},
		{
			name:  "a stop after the cut in flight",
			names: []string{"a"}, lives: map[string][]podEvent{"a": append(slices.Clone(twoStops), deleted(70, 75500*ms))},
			wantCreated: 3,
		},
		{
			name:  "a stop before the cut never replaced",
			names: []string{"a"}, lives: map[string][]podEvent{"a": twoStops[:4]},
			wantErr: "chaospod a: its Pod deleted at 09:00:20.010 (resourceVersion 50) was never replaced",
		},
		{
			name:  "two deletions for one stop",
			names: []string{"a"}, lives: map[string][]podEvent{"a": {created(15, 100*ms), deleted(30, 10020*ms), created(32, 10100*ms), deleted(34, 10200*ms), created(36, 10300*ms)}},
			wantErr: "chaospod a: its Pods deleted twice for the stop due 09:00:10 (the second at resourceVersion 34): more Pods than its stops require",
		},
		{
			name:  "a Pod no ChaosPod names",
			names: []string{"a"}, lives: map[string][]podEvent{"a": twoStops, "a-extra": {created(16, 200*ms)}},
			wantErr: "pod a-extra created, which no ChaosPod names: more Pods than the ChaosPods require",
		},
		{
			name:  "a ChaosPod without its Pod",
			names: []string{"a", "b"}, lives: map[string][]podEvent{"a": twoStops},
			wantErr: "chaospod b never had its Pod created",
		},
		{
			name:  "two creations in a row",
			names: []string{"a"}, lives: map[string][]podEvent{"a": {created(15, 100*ms), created(17, 200*ms)}},
			wantErr: "chaospod a: its Pod created twice in a row (resourceVersions 15 and 17)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			obs := chaosObservation{lives: tt.lives, history: map[string][]stopVersion{}}
			for _, name := range tt.names {
				obs.history[name] = history
			}

			got, err := obs.creations(tt.names, windowEnd, cut)

			if tt.wantErr != "" {
				require.EqualError(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantCreated, got)
		})
	}
}

// The watches read on after the cut until every ChaosPod has had its Pod
// and every Pod stopped up to the cut has been replaced: unreplaced names
// those still waiting, but not a Pod stopped after the cut.
func TestChaosUnreplacedUpToTheCut(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 12, 6, 9, 0, 0, 0, time.UTC)
	cut := t0.Add(time.Minute)
	obs := chaosObservation{lives: map[string][]podEvent{
		"running":  {{created: true, rv: 1, seen: t0}},
		"replaced": {{created: true, rv: 2, seen: t0}, {rv: 5, seen: t0.Add(10 * time.Second)}, {created: true, rv: 6, seen: t0.Add(11 * time.Second)}},
		"waiting":  {{created: true, rv: 3, seen: t0}, {rv: 7, seen: cut}},
		"late":     {{created: true, rv: 4, seen: t0}, {rv: 8, seen: cut.Add(time.Millisecond)}},
	}}
	names := []string{"late", "none-yet", "replaced", "running", "waiting"}

	assert.Equal(t, []string{"none-yet", "waiting"}, obs.unreplaced(names, cut))
	assert.Equal(t, []string{"late", "none-yet", "waiting"}, obs.unreplaced(names, cut.Add(time.Second)))
	assert.Empty(t, obs.unreplaced([]string{"running", "replaced"}, cut))
}
