package main

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// unit says how a figure is printed and whether it is compared in A/B mode.
type unit int

const (
	// param describes the workload (how many objects); never compared.
	param unit = iota
	count
	seconds
	perSecond
	mebibytes
	ratio
	// size is a small size in bytes, printed as B or KiB.
	size
	// percent is a share of the machine (0.25 prints as 25.0%); it says
	// what a turn ran on, so it is never compared.
	percent
)

// figure is one named number of a workload run. Durations are seconds,
// sizes bytes, so that medians and ratios are plain arithmetic.
type figure struct {
	name  string
	value float64
	unit  unit
}

func paramOf(name string, n int) figure              { return figure{name, float64(n), param} }
func countOf(name string, n int) figure              { return figure{name, float64(n), count} }
func durationOf(name string, d time.Duration) figure { return figure{name, d.Seconds(), seconds} }
func rateOf(name string, n int, d time.Duration) figure {
	return figure{name, float64(n) / d.Seconds(), perSecond}
}
func bytesOf(name string, b int64) figure   { return figure{name, float64(b), mebibytes} }
func ratioOf(name string, v float64) figure { return figure{name, v, ratio} }
func sizeOf(name string, b float64) figure  { return figure{name, b, size} }

func (f figure) String() string { return f.name + "=" + f.formatValue() }

func (f figure) formatValue() string {
	switch f.unit {
	case param, count:
		return fmt.Sprintf("%.0f", f.value)
	case seconds:
		return formatSeconds(f.value)
	case perSecond:
		if f.value < 100 {
			return fmt.Sprintf("%.1f/s", f.value)
		}
		return fmt.Sprintf("%.0f/s", f.value)
	case mebibytes:
		return fmt.Sprintf("%.1fMiB", f.value/(1<<20))
	case size:
		if f.value < 10<<10 {
			return fmt.Sprintf("%.0fB", f.value)
		}
		return fmt.Sprintf("%.1fKiB", f.value/(1<<10))
	case percent:
		return fmt.Sprintf("%.1f%%", f.value*100)
	default:
		return fmt.Sprintf("%.2f", f.value)
	}
}

// formatSeconds keeps three significant-ish digits at every scale, so a
// latency of milliseconds and a convergence of seconds both read at a
// glance.
func formatSeconds(s float64) string {
	switch abs := math.Abs(s); {
	case abs == 0:
		return "0s"
	case abs < 1e-3:
		return fmt.Sprintf("%.0fµs", s*1e6)
	case abs < 1:
		return fmt.Sprintf("%.1fms", s*1e3)
	default:
		return fmt.Sprintf("%.2fs", s)
	}
}

// result is what one run of a workload measured, in print order.
type result []figure

func (r result) String() string {
	parts := make([]string, len(r))
	for i, f := range r {
		parts[i] = f.String()
	}
	return strings.Join(parts, "  ")
}

// medianOf combines repeated runs figure by figure. Every run of a workload
// yields the same figures in the same order; anything else is a bug.
func medianOf(runs []result) (result, error) {
	if len(runs) == 0 {
		return nil, fmt.Errorf("no runs to combine")
	}
	out := make(result, len(runs[0]))
	for i, f := range runs[0] {
		values := make([]float64, len(runs))
		for j, run := range runs {
			if len(run) != len(runs[0]) || run[i].name != f.name {
				return nil, fmt.Errorf("run %d has other figures than run 1: %s vs %s", j+1, run, runs[0])
			}
			values[j] = run[i].value
		}
		out[i] = figure{f.name, median(values), f.unit}
	}
	return out, nil
}

// ratioOfResults is b/a for every measured figure of two results of the
// same workload; parameters are skipped. Two zeros are equal (1), and a
// zero in a only prints as +Inf rather than hiding the figure.
func ratioOfResults(a, b result) result {
	var out result
	for i, f := range a {
		if f.unit == param || f.unit == percent || i >= len(b) || b[i].name != f.name {
			continue
		}
		r := b[i].value / f.value
		if b[i].value == 0 && f.value == 0 {
			r = 1
		}
		out = append(out, ratioOf(f.name, r))
	}
	return out
}
