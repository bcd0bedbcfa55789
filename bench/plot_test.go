package main

import (
	"bytes"
	"cmp"
	"encoding/xml"
	"errors"
	"io"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestScalePlotIsWellFormedAndHoldsEverySeriesAndPoint(t *testing.T) {
	series := []scaleSeries{
		{name: "operator", points: []scalePoint{
			{objects: 60000, labeled: 41.5, ceiling: 30.2, rss: 300 << 20, heap: 150 << 20},
			{objects: 20000, labeled: 12.1, ceiling: 9.8, rss: 120 << 20, heap: 60 << 20},
			{objects: 60000, labeled: 20.4, ceiling: 15.0, rss: 290 << 20, heap: 140 << 20, podsPer: 3},
		}},
		{name: "crbaseline-tuned", ceiling: "label PATCHes alone", points: []scalePoint{
			{objects: 20000, labeled: 15.3, ceiling: 9.9, rss: 160 << 20, heap: 80 << 20},
			{objects: 60000, labeled: 50.7, ceiling: 31.0, rss: 420 << 20, heap: 210 << 20},
		}},
	}
	command := `go run ./bench --workloads=scale --plot=docs/scale.svg --operator=a&b <c>`
	var buf bytes.Buffer
	require.NoError(t, writeScalePlot(&buf, series, time.Date(2026, 12, 5, 3, 0, 0, 0, time.UTC), command))

	// Well-formed: the decoder reads it to the end, and the root is <svg>.
	dec := xml.NewDecoder(bytes.NewReader(buf.Bytes()))
	var root string
	points := map[string]int{}    // circles and squares per series group
	polylines := map[string]int{} // one per mix per series group
	var group string
	var texts []string
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		switch tok := tok.(type) {
		case xml.StartElement:
			if root == "" {
				root = tok.Name.Local
			}
			switch tok.Name.Local {
			case "g":
				for _, a := range tok.Attr {
					if a.Name.Local == "data-name" {
						group = a.Value
					}
				}
			case "circle", "rect":
				if group != "" {
					points[group]++
				}
			case "polyline":
				require.NotEmpty(t, group, "a line outside a series group")
				polylines[group]++
			}
		case xml.EndElement:
			if tok.Name.Local == "g" {
				group = ""
			}
		case xml.CharData:
			if s := strings.TrimSpace(string(tok)); s != "" {
				texts = append(texts, s)
			}
		}
	}
	require.Equal(t, "svg", root)

	// Two panels, two metrics each, for both binaries: 8 series; the
	// operator's 3-Pod point is a line of its own.
	want, wantLines := map[string]int{}, map[string]int{}
	for _, s := range []struct {
		name, ceiling string
		points, lines int
	}{
		{"operator", "ceiling (label PATCHes + Events)", 3, 2},
		{"crbaseline-tuned", "ceiling (label PATCHes alone)", 2, 1},
	} {
		for _, m := range []string{"all labeled", s.ceiling, "RSS", "Go heap in use"} {
			want[s.name+": "+m] = s.points
			wantLines[s.name+": "+m] = s.lines
		}
	}
	require.Equal(t, want, points)
	require.Equal(t, wantLines, polylines)
	all := strings.Join(texts, "\n")
	for name := range want {
		require.Contains(t, all, name, "legend entry")
	}
	require.Contains(t, all, "operator: all labeled, 60000 objects: 41.50 s")
	require.Contains(t, all, "crbaseline-tuned: RSS, 20000 objects: 160.00 MiB")
	require.Contains(t, all, "operator: all labeled, 60000 objects: 20.40 s (3 Pods per ReplicaSet)")
	require.Contains(t, all, "squares: 3 Pods per ReplicaSet (circles: one)")
	require.Contains(t, all, "2026-12-05 03:00 UTC")
	require.Contains(t, all, command, "the command, unescaped after decoding")
	require.Contains(t, all, "60k", "tick labels of the objects cached")
	// Growth exponents in the legend, fitted per line: the operator's
	// 3-Pod line has one size, so no fit of its own, and names its lines.
	require.Contains(t, all, "operator: all labeled ∝ n^1.12 (1 Pod)\n")
	require.Contains(t, all, "crbaseline-tuned: all labeled ∝ n^1.09\n")
	require.Contains(t, all, "crbaseline-tuned: ceiling (label PATCHes alone) ∝ n^1.04\n")
	require.Contains(t, all, "crbaseline-tuned: Go heap in use ∝ n^0.88\n")
	require.Contains(t, all, "ceiling: the writes named, sent straight to the API server. ∝ n^k: k of y = a·n^k, least squares on log-log")
}

func TestExponents(t *testing.T) {
	t.Parallel()
	// Exact power laws over the 1-Pod line; the 3-Pod points lie far off
	// it and must not enter its fit.
	var s scaleSeries
	for _, n := range []float64{10000, 30000, 100000} {
		s.points = append(s.points, scalePoint{
			objects: n,
			labeled: 1e-3 * math.Pow(n, 1.09),
			ceiling: 2e-3 * n,
			rss:     1000 * math.Pow(n, 0.8),
			heap:    500 * math.Pow(n, 0.9),
		})
	}
	s.points = append(s.points,
		scalePoint{objects: 40000, labeled: 1, ceiling: 1, rss: 1, heap: 1, podsPer: 3},
		scalePoint{objects: 120000, labeled: 1000, ceiling: 1000, rss: 1e12, heap: 1e12, podsPer: 3},
	)
	got := map[string]float64{}
	var names []string
	for _, f := range exponentFigures(s) {
		names = append(names, f.name)
		got[f.name] = f.value
		require.Equal(t, ratio, f.unit)
	}
	require.Equal(t, []string{"exponent-labeled", "exponent-ceiling", "exponent-rss", "exponent-heap"}, names)
	for name, want := range map[string]float64{"exponent-labeled": 1.09, "exponent-ceiling": 1, "exponent-rss": 0.8, "exponent-heap": 0.9} {
		require.InDelta(t, want, got[name], 1e-9, name)
	}
	require.Equal(t, "exponent-labeled=1.09", exponentFigures(s)[0].String())

	// The line with the most sizes is the main one, whatever its mix.
	three := scaleSeries{points: []scalePoint{
		{objects: 40000, labeled: 4, podsPer: 3}, {objects: 80000, labeled: 16, podsPer: 3}, {objects: 160000, labeled: 64, podsPer: 3},
		{objects: 10000, labeled: 1}, {objects: 20000, labeled: 2},
	}}
	require.InDelta(t, 2, exponentFigures(three)[0].value, 1e-9)
	require.Empty(t, exponentFigures(scaleSeries{points: []scalePoint{{objects: 100, labeled: 1, ceiling: 1, rss: 1, heap: 1}}}), "one size has no growth")

	labeled := func(p scalePoint) float64 { return p.labeled }
	sorted := slices.Clone(three.points)
	slices.SortFunc(sorted, func(a, b scalePoint) int {
		return cmp.Or(cmp.Compare(a.mix(), b.mix()), cmp.Compare(a.objects, b.objects))
	})
	require.Equal(t, " ∝ n^1.00 (1 Pod), n^2.00 (3 Pods)", exponentLegend(sorted, labeled))
	require.Equal(t, " ∝ n^2.00", exponentLegend(sorted[2:], labeled))
	require.Empty(t, exponentLegend(sorted[:1], labeled))
}

func TestNiceStep(t *testing.T) {
	for _, c := range []struct{ max, want float64 }{
		{30000, 10000}, {100000, 20000}, {41.5, 10}, {9, 2}, {0, 1}, {0.3, 0.1},
	} {
		require.InDelta(t, c.want, niceStep(c.max), 1e-9, "niceStep(%v)", c.max)
	}
}

// The scale-growth line needs two sizes of every binary: one size fits no
// exponent, and a binary short of a size leaves the line out.
func TestGrowthNeedsTwoSizesOfEveryBinary(t *testing.T) {
	t.Parallel()
	size := func(n, labeled float64) result {
		return result{paramOf("n", int(n)), paramOf("pods", int(n)), figure{"labeled", labeled, seconds},
			figure{"ceiling-labels", labeled / 2, seconds}, bytesOf("rss", int64(n)<<10), bytesOf("heap", int64(n)<<9)}
	}
	two := []binaryUnderTest{{"A", "bin/operator"}, {"B", "bin/crbaseline-expert"}}
	tests := []struct {
		name     string
		binaries []binaryUnderTest
		points   [][]result
		want     float64 // exponent-labeled of A; 0 for no line
	}{
		{"one size", two[:1], [][]result{{size(1000, 1)}}, 0},
		{"linear", two[:1], [][]result{{size(1000, 1), size(10000, 10)}}, 1},
		{"B short of a size", two, [][]result{{size(1000, 1), size(10000, 10)}, {size(1000, 1)}}, 0},
		{"quadratic, both", two, [][]result{{size(1000, 1), size(10000, 100)}, {size(1000, 1), size(10000, 10)}}, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := growthOf(tc.binaries, tc.points)
			if tc.want == 0 {
				assert.Nil(t, got)
				return
			}
			require.Len(t, got, len(tc.binaries))
			assert.InDelta(t, tc.want, got[0].value("exponent-labeled"), 1e-9)
		})
	}
}
