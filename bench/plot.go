package main

import (
	"bytes"
	"cmp"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// scalePoint is what one binary measured at one size of the scale
// workload: objects cached (ReplicaSets and Pods), times in seconds, sizes
// in bytes. podsPer is the Pods each ReplicaSet owns (0 reads as 1).
type scalePoint struct {
	objects, labeled, ceiling, rss, heap float64
	podsPer                              int
}

// mix is the Pods per ReplicaSet of p: a line joins only points of one mix,
// since at the same objects cached fewer ReplicaSets mean fewer writes.
func (p scalePoint) mix() int { return max(p.podsPer, 1) }

// scaleSeries is one binary's points, named after the binary.
type scaleSeries struct {
	name   string
	points []scalePoint
	// ceiling says which writes the points' ceiling times, for the legend;
	// empty reads as defaultCeiling.
	ceiling string
}

// defaultCeiling is what the scale workload's ceiling figure times today:
// sendWrites, a label PATCH and a Labeled Event per ReplicaSet. A caller
// that plots another ceiling (sendLabels' PATCHes alone) names it in
// scaleSeries.ceiling, as short: the legend has a panel's width.
const defaultCeiling = "label PATCHes + Events"

// ceilingLegend is the legend name of s's ceiling.
func (s scaleSeries) ceilingLegend() string {
	return "ceiling (" + cmp.Or(s.ceiling, defaultCeiling) + ")"
}

// writePlotFile writes the scale plot to path.
func writePlotFile(path string, series []scaleSeries, at time.Time, command string) error {
	var buf bytes.Buffer
	if err := writeScalePlot(&buf, series, at, command); err != nil {
		return err
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write plot: %w", err)
	}
	return nil
}

// The plot's geometry, in SVG user units: two panels side by side, each a
// plot area with room for its axes, and a caption below.
const (
	plotPanelW   = 480
	plotPanelH   = 340
	plotLeft     = 64 // room for the y tick labels and axis label
	plotRight    = 16
	plotTop      = 40 // room for the panel title
	plotBottom   = 52 // room for the x tick labels and axis label
	plotCaptionH = 70
)

// seriesColors tell the binaries apart; the metrics of a panel are told
// apart by solid and dashed lines.
var seriesColors = []string{"#1f77b4", "#d62728", "#2ca02c", "#9467bd"}

// panel is one chart: two metrics of every series against N.
type panel struct {
	title, yLabel string
	metrics       func(scaleSeries) [2]string // legend names: solid, dashed
	values        func(scalePoint) [2]float64 // in the y axis unit
	unit          string                      // for point tooltips
}

// scaleMetrics are the figures plotted against the objects cached, by the
// names exponentFigures gives their growth.
var scaleMetrics = []struct {
	name  string
	value func(scalePoint) float64
}{
	{"labeled", func(p scalePoint) float64 { return p.labeled }},
	{"ceiling", func(p scalePoint) float64 { return p.ceiling }},
	{"rss", func(p scalePoint) float64 { return p.rss }},
	{"heap", func(p scalePoint) float64 { return p.heap }},
}

// exponentFigures are how s's figures grow with the objects cached:
// exponent-labeled, -ceiling, -rss and -heap, each the k of y = a·n^k
// fitted to s's main line (mainLine). None when the line has fewer than two
// sizes.
func exponentFigures(s scaleSeries) []figure {
	pts := mainLine(s.points)
	var out []figure
	for _, m := range scaleMetrics {
		if k, ok := fitExponent(pts, m.value); ok {
			out = append(out, ratioOf("exponent-"+m.name, k))
		}
	}
	return out
}

// mainLine is the points of the mix with the most of them (the fewest
// Pods per ReplicaSet on a tie): a fit must not mix sizes of several Pods
// per ReplicaSet, which cache more objects for the same writes.
func mainLine(points []scalePoint) []scalePoint {
	byMix := map[int][]scalePoint{}
	for _, p := range points {
		byMix[p.mix()] = append(byMix[p.mix()], p)
	}
	best := 0
	for k, pts := range byMix {
		if best == 0 || len(pts) > len(byMix[best]) || (len(pts) == len(byMix[best]) && k < best) {
			best = k
		}
	}
	return byMix[best]
}

// fitExponent is powerLawExponent of value against the objects cached.
func fitExponent(points []scalePoint, value func(scalePoint) float64) (float64, bool) {
	xs, ys := make([]float64, len(points)), make([]float64, len(points))
	for i, p := range points {
		xs[i], ys[i] = p.objects, value(p)
	}
	return powerLawExponent(xs, ys)
}

// exponentLegend is " ∝ n^k" for each line of points (sorted by mix) that
// has a fit, with its Pods per ReplicaSet when there are several lines;
// empty when none has.
func exponentLegend(points []scalePoint, value func(scalePoint) float64) string {
	type fit struct {
		k   float64
		mix int
	}
	var fits []fit
	lines := 0
	for start := 0; start < len(points); {
		end := start + 1
		for end < len(points) && points[end].mix() == points[start].mix() {
			end++
		}
		lines++
		if k, ok := fitExponent(points[start:end], value); ok {
			fits = append(fits, fit{k, points[start].mix()})
		}
		start = end
	}
	if len(fits) == 0 {
		return ""
	}
	parts := make([]string, len(fits))
	for i, f := range fits {
		parts[i] = "n^" + strconv.FormatFloat(f.k, 'f', 2, 64)
		switch {
		case lines == 1: // one line needs no mix to tell it apart
		case f.mix == 1:
			parts[i] += " (1 Pod)"
		default:
			parts[i] += fmt.Sprintf(" (%d Pods)", f.mix)
		}
	}
	return " ∝ " + strings.Join(parts, ", ")
}

// writeScalePlot draws, against N, (a) the time to all labeled and the
// direct-write ceiling and (b) RSS and Go heap, for every series, with the
// date and the command in a caption. Standard library only: the SVG is
// built as text.
func writeScalePlot(w io.Writer, series []scaleSeries, at time.Time, invocation string) error {
	if len(series) == 0 {
		return fmt.Errorf("plot: no series")
	}
	sorted := make([]scaleSeries, len(series))
	for i, s := range series {
		pts := slices.Clone(s.points)
		slices.SortFunc(pts, func(a, b scalePoint) int {
			return cmp.Or(cmp.Compare(a.mix(), b.mix()), cmp.Compare(a.objects, b.objects))
		})
		sorted[i] = scaleSeries{name: s.name, points: pts, ceiling: s.ceiling}
	}
	panels := []panel{
		{
			title:   "(a) start to all labeled, and the ceiling",
			yLabel:  "seconds",
			metrics: func(s scaleSeries) [2]string { return [2]string{"all labeled", s.ceilingLegend()} },
			values:  func(p scalePoint) [2]float64 { return [2]float64{p.labeled, p.ceiling} },
			unit:    "s",
		},
		{
			title:   "(b) operator memory after settling",
			yLabel:  "MiB",
			metrics: func(scaleSeries) [2]string { return [2]string{"RSS", "Go heap in use"} },
			values:  func(p scalePoint) [2]float64 { return [2]float64{p.rss / (1 << 20), p.heap / (1 << 20)} },
			unit:    "MiB",
		},
	}
	command := wrap(invocation, 150)
	width := len(panels) * plotPanelW
	height := plotPanelH + plotCaptionH + 14*max(0, len(command)-2)
	var b strings.Builder
	fmt.Fprintf(&b, `<?xml version="1.0" encoding="UTF-8"?>`+"\n")
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", width, height, width, height)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", width, height)
	for i, p := range panels {
		drawPanel(&b, p, sorted, float64(i*plotPanelW))
	}
	caption := fmt.Sprintf("scale workload, medians per size; measured %s", at.UTC().Format("2006-01-02 15:04 MST"))
	if mixes := mixesOf(sorted); len(mixes) > 0 {
		caption += "; squares: " + strings.Join(mixes, ", ") + " Pods per ReplicaSet (circles: one)"
	}
	fmt.Fprintf(&b, `<text x="12" y="%d" font-size="11">%s</text>`+"\n", plotPanelH+18, esc(caption))
	fmt.Fprintf(&b, `<text x="12" y="%d" font-size="11">%s</text>`+"\n", plotPanelH+32,
		"ceiling: the writes named, sent straight to the API server. ∝ n^k: k of y = a·n^k, least squares on log-log over a line's sizes, n = objects cached")
	for i, line := range command {
		fmt.Fprintf(&b, `<text x="12" y="%d" font-size="11" font-family="monospace">%s</text>`+"\n", plotPanelH+48+14*i, esc(line))
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// drawPanel draws one chart with its left edge at x0.
func drawPanel(b *strings.Builder, p panel, series []scaleSeries, x0 float64) {
	left, top := x0+plotLeft, float64(plotTop)
	w, h := float64(plotPanelW-plotLeft-plotRight), float64(plotPanelH-plotTop-plotBottom)
	var maxX, maxY float64
	for _, s := range series {
		for _, pt := range s.points {
			maxX = max(maxX, pt.objects)
			v := p.values(pt)
			maxY = max(maxY, v[0], v[1])
		}
	}
	xStep, yStep := niceStep(maxX), niceStep(maxY)
	xMax, yMax := xStep*math.Ceil(maxX/xStep), yStep*math.Ceil(maxY/yStep)
	if maxX == 0 {
		xMax = xStep
	}
	if maxY == 0 {
		yMax = yStep
	}
	px := func(v float64) float64 { return left + w*v/xMax }
	py := func(v float64) float64 { return top + h - h*v/yMax }

	fmt.Fprintf(b, `<g id="%s">`+"\n", esc(strings.Fields(p.title)[0]))
	fmt.Fprintf(b, `<text x="%.1f" y="22" font-size="14" font-weight="bold">%s</text>`+"\n", left, esc(p.title))
	// Grid, ticks and tick labels.
	for v := 0.0; v <= yMax+yStep/2; v += yStep {
		y := py(v)
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#e0e0e0"/>`+"\n", left, y, left+w, y)
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="end">%s</text>`+"\n", left-6, y+4, tickLabel(v))
	}
	for v := 0.0; v <= xMax+xStep/2; v += xStep {
		x := px(v)
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#e0e0e0"/>`+"\n", x, top, x, top+h)
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`+"\n", x, top+h+16, tickLabel(v))
	}
	fmt.Fprintf(b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="none" stroke="#333"/>`+"\n", left, top, w, h)
	fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="middle">objects cached: ReplicaSets and the Pods they own</text>`+"\n", left+w/2, top+h+36)
	fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="middle" transform="rotate(-90 %.1f %.1f)">%s</text>`+"\n", x0+16, top+h/2, x0+16, top+h/2, esc(p.yLabel))

	// Lines and points, then the legend in the upper left corner.
	for i, s := range series {
		color := seriesColors[i%len(seriesColors)]
		metrics := p.metrics(s)
		for m := range 2 {
			dash := ""
			if m == 1 {
				dash = ` stroke-dasharray="6 4"`
			}
			name := s.name + ": " + metrics[m]
			fmt.Fprintf(b, `<g class="series" data-name="%s">`+"\n", esc(name))
			// The points are sorted by mix, so each mix is one run of them.
			for start := 0; start < len(s.points); {
				end := start + 1
				for end < len(s.points) && s.points[end].mix() == s.points[start].mix() {
					end++
				}
				var coords []string
				for _, pt := range s.points[start:end] {
					coords = append(coords, fmt.Sprintf("%.1f,%.1f", px(pt.objects), py(p.values(pt)[m])))
				}
				fmt.Fprintf(b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="2"%s/>`+"\n", strings.Join(coords, " "), color, dash)
				start = end
			}
			for _, pt := range s.points {
				v := p.values(pt)[m]
				fill := color
				if m == 1 {
					fill = "white"
				}
				x, y := px(pt.objects), py(v)
				title := fmt.Sprintf("%s, %.0f objects: %s %s", name, pt.objects, strconv.FormatFloat(v, 'f', 2, 64), p.unit)
				if pt.mix() == 1 {
					fmt.Fprintf(b, `<circle cx="%.1f" cy="%.1f" r="3.5" fill="%s" stroke="%s" stroke-width="1.5"><title>%s</title></circle>`+"\n", x, y, fill, color, esc(title))
					continue
				}
				title += fmt.Sprintf(" (%d Pods per ReplicaSet)", pt.mix())
				fmt.Fprintf(b, `<rect x="%.1f" y="%.1f" width="8" height="8" fill="%s" stroke="%s" stroke-width="1.5"><title>%s</title></rect>`+"\n", x-4, y-4, fill, color, esc(title))
			}
			b.WriteString("</g>\n")
			ly := top + 14 + float64(2*i+m)*16
			fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="2"%s/>`+"\n", left+10, ly-4, left+34, ly-4, color, dash)
			legend := name + exponentLegend(s.points, func(pt scalePoint) float64 { return p.values(pt)[m] })
			fmt.Fprintf(b, `<text x="%.1f" y="%.1f" font-size="11">%s</text>`+"\n", left+40, ly, esc(legend))
		}
	}
	b.WriteString("</g>\n")
}

// mixesOf lists the Pods per ReplicaSet other than one among the points,
// in increasing order.
func mixesOf(series []scaleSeries) []string {
	var mixes []int
	for _, s := range series {
		for _, pt := range s.points {
			if k := pt.mix(); k > 1 && !slices.Contains(mixes, k) {
				mixes = append(mixes, k)
			}
		}
	}
	slices.Sort(mixes)
	out := make([]string, len(mixes))
	for i, k := range mixes {
		out[i] = strconv.Itoa(k)
	}
	return out
}

// niceStep is a tick step of 1, 2 or 5 times a power of ten giving about
// five ticks up to maxV.
func niceStep(maxV float64) float64 {
	if maxV <= 0 {
		return 1
	}
	raw := maxV / 5
	pow := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*pow >= raw {
			return m * pow
		}
	}
	return 10 * pow
}

// tickLabel prints 30000 as 30k and keeps small values short.
func tickLabel(v float64) string {
	if v >= 1000 && math.Mod(v, 1000) == 0 {
		return strconv.FormatFloat(v/1000, 'f', -1, 64) + "k"
	}
	return strconv.FormatFloat(math.Round(v*1000)/1000, 'f', -1, 64)
}

// wrap splits s at spaces into lines of at most width bytes where it can.
func wrap(s string, width int) []string {
	var lines []string
	var line string
	for _, word := range strings.Fields(s) {
		if line != "" && len(line)+1+len(word) > width {
			lines = append(lines, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += word
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}

// esc escapes text for SVG content and attribute values.
func esc(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}
