package main

import (
	"math"
	"slices"
	"time"
)

// percentile returns the p-th percentile (0 < p <= 100) of xs by the
// nearest-rank method: the smallest value that at least p % of xs are less
// than or equal to. It is a value that was actually measured, never an
// interpolation, which is what a latency figure should be. xs is not
// modified; an empty xs gives 0.
func percentile(xs []time.Duration, p float64) time.Duration {
	if len(xs) == 0 {
		return 0
	}
	sorted := slices.Clone(xs)
	slices.Sort(sorted)
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	return sorted[min(max(rank, 1), len(sorted))-1]
}

// median is the middle of xs (the mean of the two middle values for an even
// count): the figure printed for repeated runs, because one run slowed by
// a neighbour's build moves it less than it moves the mean. An empty xs
// gives 0.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	sorted := slices.Clone(xs)
	slices.Sort(sorted)
	mid := len(sorted) / 2
	if len(sorted)%2 == 1 {
		return sorted[mid]
	}
	return (sorted[mid-1] + sorted[mid]) / 2
}

// powerLawExponent fits y = a·x^k to the points (xs[i], ys[i]) by least
// squares on log x and log y and returns k: how a figure grows with size,
// 1 for linear, 2 for quadratic, whatever a. Points whose x or y is not
// positive have no logarithm and are left out; ok is false unless two or
// more distinct x remain.
func powerLawExponent(xs, ys []float64) (k float64, ok bool) {
	var lx, ly []float64
	for i := range min(len(xs), len(ys)) {
		x, y := xs[i], ys[i]
		if x <= 0 || y <= 0 || math.IsInf(x, 0) || math.IsInf(y, 0) || math.IsNaN(x) || math.IsNaN(y) {
			continue
		}
		lx, ly = append(lx, math.Log(x)), append(ly, math.Log(y))
	}
	if len(lx) < 2 {
		return 0, false
	}
	// Centred sums: the logarithms of large sizes are close together, and
	// Σx² − (Σx)²/n would lose their differences.
	var mx, my float64
	for i := range lx {
		mx += lx[i]
		my += ly[i]
	}
	mx /= float64(len(lx))
	my /= float64(len(ly))
	var sxx, sxy float64
	for i := range lx {
		sxx += (lx[i] - mx) * (lx[i] - mx)
		sxy += (lx[i] - mx) * (ly[i] - my)
	}
	if sxx == 0 {
		return 0, false // one x, repeated: no slope to fit
	}
	return sxy / sxx, true
}
