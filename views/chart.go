package views

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// ChartSeries is one line of input: a rate per bucket, oldest first.
type ChartSeries struct {
	Name   string
	Values []float64
	Total  int64 // events in the whole window, for the legend
}

// Chart is a line chart laid out for a server-rendered SVG: coordinates are
// computed here so the template only places elements.
type Chart struct {
	Width, Height int
	Left, Right   float64 // plot area, in viewBox units
	Top, Bottom   float64
	Lines         []ChartLine
	YTicks        []ChartTick
	XTicks        []ChartTick
	Unit          string
	Empty         bool   // no events in the window
	By            string // what a line stands for: "source" (default) or "channel"
	Start, End    time.Time
	RangeLabel    string // the range picked, "last 24 hours"
}

// RangeChoice is one button of the time-range picker.
type RangeChoice struct {
	Key     string // the ?range= value
	Label   string // "24h"
	Title   string // "last 24 hours"
	Current bool
}

// Range names the chosen range for captions ("last 24 hours" by default).
func (c Chart) Range() string {
	if c.RangeLabel == "" {
		return "last 24 hours"
	}
	return c.RangeLabel
}

// Domain is the x axis' first and last instant, for the caption.
func (c Chart) Domain() string {
	if c.End.IsZero() {
		return ""
	}
	layout := "15:04"
	if c.End.Sub(c.Start) > 24*time.Hour || c.Start.YearDay() != c.End.YearDay() {
		layout = "2 Jan 15:04"
	}
	return c.Start.UTC().Format(layout) + " – " + c.End.UTC().Format(layout) + " UTC"
}

// TestID keeps the source chart's historical test id ("rate-chart").
func (c Chart) TestID() string {
	if c.ByLabel() == "source" {
		return "rate-chart"
	}
	return c.ByLabel() + "-chart"
}

// ByLabel names what each line stands for, for titles and the SVG's label.
func (c Chart) ByLabel() string {
	if c.By == "" {
		return "source"
	}
	return c.By
}

// ChartLine is one series' polyline and legend entry.
type ChartLine struct {
	Name   string
	Class  string // series-N, coloured by the stylesheet
	Points string // "x,y x,y ..."
	Total  int64
	Peak   float64
}

// ChartTick is an axis label at Pos (x for XTicks, y for YTicks).
type ChartTick struct {
	Pos   float64
	Label string
}

// chartPalette is how many series colours the stylesheet defines.
const chartPalette = 8

// NewRateChart lays out series sampled every bucket from start (UTC labels
// every xEvery). Values are events per minute.
func NewRateChart(start time.Time, bucket time.Duration, series []ChartSeries) Chart {
	c := Chart{Width: 720, Height: 220, Left: 44, Right: 708, Top: 12, Bottom: 190, Unit: "events/min"}
	n := 0
	peak := 0.0
	for _, s := range series {
		n = max(n, len(s.Values))
		for _, v := range s.Values {
			peak = math.Max(peak, v)
		}
	}
	c.Empty = peak == 0
	top := niceCeil(peak)
	for i := 0; i <= 4; i++ {
		v := top * float64(i) / 4
		c.YTicks = append(c.YTicks, ChartTick{Pos: c.y(v, top), Label: trimFloat(v)})
	}
	if n < 2 {
		return c
	}
	step := (c.Right - c.Left) / float64(n-1)
	c.Start = start.UTC()
	c.End = c.Start.Add(time.Duration(n-1) * bucket)
	c.XTicks = timeTicks(c.Start, bucket, n, c.Left, step)
	for si, s := range series {
		var b strings.Builder
		line := ChartLine{Name: s.Name, Class: "series-" + strconv.Itoa(si%chartPalette), Total: s.Total}
		for i, v := range s.Values {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(strconv.FormatFloat(c.Left+float64(i)*step, 'f', 1, 64))
			b.WriteByte(',')
			b.WriteString(strconv.FormatFloat(c.y(v, top), 'f', 1, 64))
			line.Peak = math.Max(line.Peak, v)
		}
		line.Points = b.String()
		c.Lines = append(c.Lines, line)
	}
	return c
}

// tickSteps are the x-axis label intervals, finest first.
func tickSteps() []time.Duration {
	return []time.Duration{time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute, 15 * time.Minute,
		30 * time.Minute, time.Hour, 2 * time.Hour, 3 * time.Hour, 6 * time.Hour, 12 * time.Hour, 24 * time.Hour,
		2 * 24 * time.Hour, 7 * 24 * time.Hour}
}

// maxXTicks keeps the axis labels from touching on a phone-width chart.
const maxXTicks = 6

// timeTicks labels the x axis at round instants (every 5 min, 1 h, 1 day…)
// chosen so at most maxXTicks fit the domain; the labels carry the date once
// the domain spans more than a day.
func timeTicks(start time.Time, bucket time.Duration, n int, left, step float64) []ChartTick {
	span := time.Duration(n-1) * bucket
	steps := tickSteps()
	every := steps[len(steps)-1]
	for _, d := range steps {
		if d >= bucket && span/d <= maxXTicks {
			every = d
			break
		}
	}
	layout := "15:04"
	switch {
	case every >= 24*time.Hour:
		layout = "2 Jan"
	case span > 24*time.Hour:
		layout = "2 Jan 15:04"
	}
	var out []ChartTick
	t := start.Truncate(every)
	if t.Before(start) {
		t = t.Add(every)
	}
	for end := start.Add(span); !t.After(end); t = t.Add(every) {
		out = append(out, ChartTick{Pos: left + float64(t.Sub(start))/float64(bucket)*step, Label: t.Format(layout)})
	}
	return out
}

// y maps a value to the plot's vertical coordinate (0 at the bottom).
func (c Chart) y(v, top float64) float64 {
	return c.Bottom - (v/top)*(c.Bottom-c.Top)
}

// niceCeil rounds up to 1, 2 or 5 times a power of ten (at least 1).
func niceCeil(v float64) float64 {
	if v <= 1 {
		return 1
	}
	exp := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if v <= m*exp {
			return m * exp
		}
	}
	return 10 * exp
}

func trimFloat(v float64) string {
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// f1 formats a coordinate for an SVG attribute.
func f1(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

// FunnelStage is one stage's contact count, in pipeline order.
type FunnelStage struct {
	Name     string
	Count    int64
	Terminal bool
}

// Funnel is a horizontal bar chart of contacts per stage, laid out for SVG.
type Funnel struct {
	Width, Height int
	Bars          []FunnelBar
	Total         int64
}

// FunnelBar is one stage's bar.
type FunnelBar struct {
	Name     string
	Count    int64
	Share    string // of all contacts, e.g. "42%"
	Y        float64
	BarW     float64
	LabelY   float64
	Class    string
	Terminal bool
	X        float64 // where the bar starts
	LabelX   float64 // right edge of the stage name
	CountX   float64 // where the count starts
}

// Funnel geometry, in viewBox units.
const (
	funnelLabel  = 160.0 // right edge of the stage names
	funnelLeft   = 170.0
	funnelRight  = 880.0
	funnelBar    = 26.0
	funnelGap    = 10.0
	funnelMinBar = 3.0
)

// NewFunnel lays out stages (ordered first, then terminal ones).
func NewFunnel(stages []FunnelStage) Funnel {
	f := Funnel{Width: 1000}
	var top int64
	for _, s := range stages {
		f.Total += s.Count
		top = max(top, s.Count)
	}
	for i, s := range stages {
		y := float64(i) * (funnelBar + funnelGap)
		b := FunnelBar{Name: s.Name, Count: s.Count, Y: y, LabelY: y + funnelBar/2 + 4, Terminal: s.Terminal, Class: "funnel-bar"}
		if s.Terminal {
			b.Class += " funnel-terminal"
		}
		if top > 0 {
			b.BarW = math.Max(funnelMinBar, (funnelRight-funnelLeft)*float64(s.Count)/float64(top))
		} else {
			b.BarW = funnelMinBar
		}
		if f.Total > 0 {
			b.Share = strconv.Itoa(int(math.Round(100*float64(s.Count)/float64(f.Total)))) + "%"
		} else {
			b.Share = "0%"
		}
		b.X, b.LabelX, b.CountX = funnelLeft, funnelLabel, funnelLeft+b.BarW+8
		f.Bars = append(f.Bars, b)
	}
	f.Height = int(float64(len(stages))*(funnelBar+funnelGap) - funnelGap)
	if f.Height < 1 {
		f.Height = 1
	}
	return f
}

// tickAnchor keeps an x-axis label inside the plot at either edge.
func tickAnchor(pos float64, c Chart) string {
	switch {
	case pos > c.Right-20:
		return "end"
	case pos < c.Left+20:
		return "start"
	}
	return "middle"
}
