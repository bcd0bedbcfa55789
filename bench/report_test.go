package main

import (
	"bufio"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestReportMarkdown(t *testing.T) {
	t.Parallel()
	backlog := func(converge time.Duration, ratio float64) result {
		return result{paramOf("n", 2000), durationOf("converge", converge), ratioOf("ratio", ratio), countOf("events", 2000)}
	}
	mutate := func(rate int, p99 time.Duration) result {
		return result{paramOf("n", 20000), rateOf("rate", rate, time.Second), durationOf("p99", p99)}
	}
	memory := func(rss int64, perObject float64) result {
		return result{bytesOf("rss", rss), sizeOf("per-object", perObject)}
	}
	tests := []struct {
		name   string
		labels []string
		rows   []reportRow
		want   string
	}{
		{
			name:   "one binary: its figures, the parameters naming the row",
			labels: []string{"A"},
			rows: []reportRow{
				{"rs-backlog", []result{backlog(3660*time.Millisecond, 1.3149)}},
				{"webhook-mutate", []result{mutate(19095, 7800*time.Microsecond)}},
			},
			want: "| workload | A |\n" +
				"| --- | --- |\n" +
				"| rs-backlog (n 2000) | converge 3.66s, ratio 1.31, events 2000 |\n" +
				"| webhook-mutate (n 20000) | rate 19095/s, p99 7.8ms |\n",
		},
		{
			name:   "baselines: each one's figures and its ratios to A",
			labels: []string{"A", "B", "C"},
			rows: []reportRow{
				{"rs-backlog", []result{backlog(2*time.Second, 1.2), backlog(3*time.Second, 1.5), backlog(time.Second, 0.9)}},
			},
			want: "| workload | A | B | B/A | C | C/A |\n" +
				"| --- | --- | --- | --- | --- | --- |\n" +
				"| rs-backlog (n 2000) | converge 2.00s, ratio 1.20, events 2000 | converge 3.00s, ratio 1.50, events 2000 | converge 1.50, ratio 1.25, events 1.00 | converge 1.00s, ratio 0.90, events 2000 | converge 0.50, ratio 0.75, events 1.00 |\n",
		},
		{
			name:   "no parameters: the workload alone; sizes as the driver prints them",
			labels: []string{"A", "B"},
			rows: []reportRow{
				{"memory", []result{memory(47<<20+800<<10, 1074), memory(66<<20, 20480)}},
			},
			want: "| workload | A | B | B/A |\n" +
				"| --- | --- | --- | --- |\n" +
				"| memory | rss 47.8MiB, per-object 1074B | rss 66.0MiB, per-object 20.0KiB | rss 1.38, per-object 19.07 |\n",
		},
		{
			name:   "a pipe in a cell is escaped",
			labels: []string{"A"},
			rows:   []reportRow{{"a|b", []result{{countOf("x|y", 1)}}}},
			want:   "| workload | A |\n| --- | --- |\n| a\\|b | x\\|y 1 |\n",
		},
		{
			name:   "no job ran: the header alone",
			labels: []string{"A", "B"},
			want:   "| workload | A | B | B/A |\n| --- | --- | --- | --- |\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := &report{labels: tt.labels}
			for _, row := range tt.rows {
				r.add(row.workload, row.medians)
			}
			assert.Equal(t, tt.want, r.markdown())
		})
	}
}

func TestRunHeader(t *testing.T) {
	t.Parallel()
	h := runHeader{
		commit:  "abc1234-dirty",
		when:    time.Date(2026, 12, 7, 9, 8, 7, 0, time.FixedZone("CET", 3600)),
		machine: "AMD EPYC 7B13, 2 cores",
		command: "go run ./bench --runs=3",
	}
	assert.Equal(t, "# bench: commit abc1234-dirty, 2026-12-07 08:08:07 UTC, AMD EPYC 7B13, 2 cores, go run ./bench --runs=3", h.String())
}

func TestCPUModel(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, cpuinfo, want string
	}{
		{"the first model name", "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 7B13\n\nprocessor\t: 1\nmodel name\t: other\n", "AMD EPYC 7B13"},
		{"none: the fallback", "processor\t: 0\nFeatures\t: fp asimd\n", "arm64"},
		{"an empty model name is none", "model name\t: \n", "arm64"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, cpuModel(bufio.NewScanner(strings.NewReader(tt.cpuinfo)), "arm64"))
		})
	}
}
