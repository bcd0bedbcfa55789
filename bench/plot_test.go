package main

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestScalePlotIsWellFormedAndHoldsEverySeriesAndPoint(t *testing.T) {
	series := []scaleSeries{
		{name: "operator", points: []scalePoint{
			{objects: 60000, labeled: 41.5, ceiling: 30.2, rss: 300 << 20, heap: 150 << 20},
			{objects: 20000, labeled: 12.1, ceiling: 9.8, rss: 120 << 20, heap: 60 << 20},
			{objects: 60000, labeled: 20.4, ceiling: 15.0, rss: 290 << 20, heap: 140 << 20, podsPer: 3},
		}},
		{name: "crbaseline-tuned", points: []scalePoint{
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
		name          string
		points, lines int
	}{{"operator", 3, 2}, {"crbaseline-tuned", 2, 1}} {
		for _, m := range []string{"all labeled", "ceiling (a direct PATCH per ReplicaSet)", "RSS", "Go heap in use"} {
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
}

func TestNiceStep(t *testing.T) {
	for _, c := range []struct{ max, want float64 }{
		{30000, 10000}, {100000, 20000}, {41.5, 10}, {9, 2}, {0, 1}, {0.3, 0.1},
	} {
		require.InDelta(t, c.want, niceStep(c.max), 1e-9, "niceStep(%v)", c.max)
	}
}
