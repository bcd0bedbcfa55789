package main

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPercentile(t *testing.T) {
	t.Parallel()
	ms := func(xs ...int) []time.Duration {
		out := make([]time.Duration, len(xs))
		for i, x := range xs {
			out[i] = time.Duration(x) * time.Millisecond
		}
		return out
	}
	hundred := make([]int, 100)
	for i := range hundred {
		hundred[i] = 100 - i // descending: percentile must sort
	}
	tests := []struct {
		name string
		xs   []time.Duration
		p    float64
		want time.Duration
	}{
		{"empty", nil, 50, 0},
		{"one value is every percentile", ms(7), 99, 7 * time.Millisecond},
		{"p50 of an odd count is the middle", ms(3, 1, 2), 50, 2 * time.Millisecond},
		{"p50 of an even count is the lower middle", ms(4, 1, 3, 2), 50, 2 * time.Millisecond},
		{"p99 of 100 values is the 99th", ms(hundred...), 99, 99 * time.Millisecond},
		{"p100 is the maximum", ms(hundred...), 100, 100 * time.Millisecond},
		{"a tiny p is the minimum", ms(hundred...), 0.001, 1 * time.Millisecond},
		{"negative values sort below zero", ms(-5, 10, 0), 50, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			before := append([]time.Duration(nil), tt.xs...)
			assert.Equal(t, tt.want, percentile(tt.xs, tt.p))
			assert.Equal(t, before, tt.xs, "input left as it was")
		})
	}
}

func TestMedian(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		xs   []float64
		want float64
	}{
		{"empty", nil, 0},
		{"one", []float64{3.5}, 3.5},
		{"odd count", []float64{9, 1, 5}, 5},
		{"even count is the mean of the middle two", []float64{4, 1, 3, 2}, 2.5},
		{"an outlier does not move it", []float64{1, 1.1, 1.2, 1000}, 1.15},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			before := append([]float64(nil), tt.xs...)
			assert.InDelta(t, tt.want, median(tt.xs), 1e-9)
			assert.Equal(t, before, tt.xs, "input left as it was")
		})
	}
}

func TestRatioOfResults(t *testing.T) {
	t.Parallel()
	a := result{paramOf("n", 10), countOf("early", 0), countOf("denied", 0), durationOf("p99", 2*time.Millisecond), {"steal", 0.1, percent}}
	b := result{paramOf("n", 10), countOf("early", 0), countOf("denied", 3), durationOf("p99", 3*time.Millisecond), {"steal", 0.3, percent}}
	got := ratioOfResults(a, b)
	require.Len(t, got, 3, "parameters and shares of the machine are not compared")
	assert.Equal(t, "early=1.00", got[0].String(), "two zeros are equal")
	assert.Equal(t, "denied=+Inf", got[1].String(), "a zero in a only stays visible")
	assert.Equal(t, "p99=1.50", got[2].String())
}

func TestPowerLawExponent(t *testing.T) {
	t.Parallel()
	// y = a·x^k at the sizes of the scale workload, and with noise.
	power := func(a, k float64, xs ...float64) []float64 {
		ys := make([]float64, len(xs))
		for i, x := range xs {
			ys[i] = a * math.Pow(x, k)
		}
		return ys
	}
	sizes := []float64{20000, 60000, 100000, 200000}
	tests := []struct {
		name   string
		xs, ys []float64
		want   float64
		ok     bool
	}{
		{"linear", sizes, power(3e-4, 1, sizes...), 1, true},
		{"a known exponent, whatever the factor", sizes, power(7.5, 1.09, sizes...), 1.09, true},
		{"quadratic", []float64{1, 2, 4, 8}, power(1, 2, 1, 2, 4, 8), 2, true},
		{"constant", sizes, power(42, 0, sizes...), 0, true},
		{"shrinking", []float64{10, 100}, []float64{1, 0.1}, -1, true},
		{"two points are enough", []float64{1000, 4000}, []float64{2, 8}, 1, true},
		{"noise around n^1.5 fits near 1.5", []float64{1e3, 2e3, 4e3, 8e3, 16e3},
			[]float64{1.05 * math.Pow(1e3, 1.5), 0.95 * math.Pow(2e3, 1.5), 1.02 * math.Pow(4e3, 1.5), 0.98 * math.Pow(8e3, 1.5), 1.01 * math.Pow(16e3, 1.5)}, 1.5, true},
		{"points without a logarithm are left out", []float64{0, 10, 100, -5}, []float64{3, 5, 50, 2}, 1, true},
		{"one point", []float64{1000}, []float64{2}, 0, false},
		{"one size, repeated", []float64{1000, 1000}, []float64{2, 3}, 0, false},
		{"a zero y leaves one point", []float64{1000, 2000}, []float64{0, 3}, 0, false},
		{"none", nil, nil, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			k, ok := powerLawExponent(tt.xs, tt.ys)
			require.Equal(t, tt.ok, ok)
			assert.InDelta(t, tt.want, k, 0.02)
		})
	}
}
