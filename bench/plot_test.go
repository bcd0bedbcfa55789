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
	circles := map[string]int{} // per series group
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
			case "circle":
				require.NotEmpty(t, group, "a point outside a series group")
				circles[group]++
			}
		case xml.CharData:
			if s := strings.TrimSpace(string(tok)); s != "" {
				texts = append(texts, s)
			}
		}
	}
	require.Equal(t, "svg", root)

	// Two panels, two metrics each, for both binaries: 8 series of 2 points.
	want := map[string]int{}
	for _, s := range []string{"operator", "crbaseline-tuned"} {
		for _, m := range []string{"all labeled", "ceiling (a direct PATCH per ReplicaSet)", "RSS", "Go heap in use"} {
			want[s+": "+m] = 2
		}
	}
	require.Equal(t, want, circles)
	all := strings.Join(texts, "\n")
	for name := range want {
		require.Contains(t, all, name, "legend entry")
	}
	require.Contains(t, all, "operator: all labeled, 60000 objects: 41.50 s")
	require.Contains(t, all, "crbaseline-tuned: RSS, 20000 objects: 160.00 MiB")
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
