package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The gauge is read from the text exposition whatever the order of its
// labels and however its selector's value is escaped; other metrics, and
// ones whose name merely begins with it, are skipped.
func TestSamplesOfReadsALabelledGauge(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		body    string
		want    []sample
		wantErr string
	}{
		{
			name: "every series, comments and other metrics skipped",
			body: `# HELP operator_cache_objects Number of objects held in the operator's informer caches.
# TYPE operator_cache_objects gauge
operator_cache_objects{kind="Pod",selector=""} 5000
operator_cache_objects{selector="chaos.example.com/chaospod",kind="Pod"} 20
operator_cache_objects_total{kind="Pod",selector=""} 1
go_memstats_heap_inuse_bytes 1.2e+07
operator_cache_objects{kind="ReplicaSet",selector=""} 1000 1712345678000
`,
			want: []sample{
				{labels: map[string]string{"kind": "Pod", "selector": ""}, value: 5000},
				{labels: map[string]string{"kind": "Pod", "selector": "chaos.example.com/chaospod"}, value: 20},
				{labels: map[string]string{"kind": "ReplicaSet", "selector": ""}, value: 1000},
			},
		},
		{
			name: "escaped quotes, backslashes and newlines in a value",
			body: `operator_cache_objects{kind="Pod",selector="a in (x,\"y\"),b=\\,c\n"} 3` + "\n",
			want: []sample{{labels: map[string]string{"kind": "Pod", "selector": "a in (x,\"y\"),b=\\,c\n"}, value: 3}},
		},
		{
			name: "no labels",
			body: "operator_cache_objects 7\n",
			want: []sample{{labels: map[string]string{}, value: 7}},
		},
		{name: "not exported", body: "go_goroutines 12\n"},
		{name: "unterminated value", body: `operator_cache_objects{kind="Pod} 3`, wantErr: "unterminated"},
		{name: "unquoted value", body: `operator_cache_objects{kind=Pod} 3`, wantErr: "quoted"},
		{name: "no value", body: `operator_cache_objects{kind="Pod"}`, wantErr: "no value"},
		{name: "a value that is no number", body: `operator_cache_objects{kind="Pod"} many`, wantErr: "value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()

			got, err := samplesOf([]byte(tt.body), cacheObjectsMetric)

			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

// An informer of every object of a kind counts alone, since it holds what
// the kind's selecting informers hold too; without one, the selecting
// informers are summed. largest is the biggest single informer.
func TestCachedByKindCountsEachObjectOnce(t *testing.T) {
	t.Parallel()
	series := func(kind, selector string, v float64) sample {
		return sample{labels: map[string]string{"kind": kind, "selector": selector}, value: v}
	}
	tests := []struct {
		name    string
		series  []sample
		want    map[string]kindCache
		wantErr string
	}{
		{
			name:   "one informer per kind",
			series: []sample{series("Pod", "", 5000), series("ReplicaSet", "", 1000)},
			want:   map[string]kindCache{"Pod": {objects: 5000, largest: 5000}, "ReplicaSet": {objects: 1000, largest: 1000}},
		},
		{
			name:   "an informer of every Pod beside a selecting one",
			series: []sample{series("Pod", "", 5020), series("Pod", "chaos/chaospod", 20), series("ChaosPod", "", 20)},
			want:   map[string]kindCache{"Pod": {objects: 5020, largest: 5020}, "ChaosPod": {objects: 20, largest: 20}},
		},
		{
			name:   "selecting informers only",
			series: []sample{series("Pod", "a=1", 30), series("Pod", "a=2", 12)},
			want:   map[string]kindCache{"Pod": {objects: 42, largest: 30}},
		},
		{
			name:   "an empty informer",
			series: []sample{series("Pod", "", 0)},
			want:   map[string]kindCache{"Pod": {}},
		},
		{name: "no kind", series: []sample{series("", "", 3)}, wantErr: "no kind"},
		{name: "not a count", series: []sample{series("Pod", "", 2.5)}, wantErr: "not a count"},
		{name: "negative", series: []sample{series("Pod", "", -1)}, wantErr: "not a count"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()

			got, err := cachedByKind(tt.series)

			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

// A binary caches at least what the workload created and at most what the
// cluster holds of each kind; the error names the binary, the kind, what
// it caches and what was wanted.
func TestCheckCachedBoundsEveryKind(t *testing.T) {
	t.Parallel()
	wants := []cacheWant{{kind: "ReplicaSet", created: 1000, existing: 1000}, {kind: "Pod", created: 5000, existing: 5000}}
	tests := []struct {
		name    string
		cached  map[string]kindCache
		wantErr []string
	}{
		{
			name:   "all of them",
			cached: map[string]kindCache{"ReplicaSet": {objects: 1000, largest: 1000}, "Pod": {objects: 5000, largest: 5000}},
		},
		{
			name:    "the Pod watch dropped",
			cached:  map[string]kindCache{"ReplicaSet": {objects: 1000, largest: 1000}},
			wantErr: []string{"B (/bin/crbaseline)", "caches no Pod", "at least the 5000"},
		},
		{
			name:    "Pods missing",
			cached:  map[string]kindCache{"ReplicaSet": {objects: 1000, largest: 1000}, "Pod": {objects: 4999, largest: 4999}},
			wantErr: []string{"B (/bin/crbaseline)", "caches 4999 Pod objects", "at least the 5000"},
		},
		{
			name:    "more than the cluster has",
			cached:  map[string]kindCache{"ReplicaSet": {objects: 1001, largest: 1001}, "Pod": {objects: 5000, largest: 5000}},
			wantErr: []string{"B (/bin/crbaseline)", "caches 1001 ReplicaSet objects", "at most the 1000 in the cluster"},
		},
		{
			name:    "one informer holds more than the cluster has",
			cached:  map[string]kindCache{"ReplicaSet": {objects: 1000, largest: 1000}, "Pod": {objects: 5000, largest: 5001}},
			wantErr: []string{"an informer of 5001 Pod objects", "at most the 5000"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()

			err := checkCached(binaryName("/bin/crbaseline", "B"), tt.cached, wants)

			if len(tt.wantErr) == 0 {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			for _, s := range tt.wantErr {
				assert.Contains(t, err.Error(), s)
			}
		})
	}
}

// The seeding's log line names every reason and resource of the webhook
// server's connection counters, zeros too, and says when they are missing.
func TestConnectionCounts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		body string
		want string
	}{
		{
			name: "both counters",
			body: `# TYPE operator_webhook_connections_rejected_total counter
operator_webhook_connections_rejected_total{reason="client_connections"} 2
operator_webhook_connections_rejected_total{reason="connections"} 0
operator_webhook_connections_evicted_total{resource="connections"} 31
`,
			want: `connections_rejected_total{reason="client_connections"}=2 connections_rejected_total{reason="connections"}=0 connections_evicted_total{resource="connections"}=31`,
		},
		{
			name: "a binary without them",
			body: "go_goroutines 12\n",
			want: "operator_webhook_connections_rejected_total not exported",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, connectionCounts([]byte(tt.body)))
		})
	}
}
