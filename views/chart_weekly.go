package views

import (
	"strconv"
	"time"
)

// WeeklySeries is one source and channel's new leads per week.
type WeeklySeries struct {
	Name   string
	Counts []int64 // one per week, oldest first
}

// WeeklyBars is a stacked bar chart of new leads per week, laid out for SVG.
type WeeklyBars struct {
	Width, Height int
	Left, Right   float64
	Top, Bottom   float64
	Bars          []WeeklyBar
	YTicks        []ChartTick
	Legend        []ChartLine // Name, Class and Total only
	Empty         bool
}

// WeeklyBar is one week's stack.
type WeeklyBar struct {
	Label    string // "3 Mar"
	X, W     float64
	LabelX   float64
	Total    int64
	Segments []BarSegment
}

// BarSegment is one series' part of a week's stack.
type BarSegment struct {
	Y, H  float64
	Class string
	Title string
}

// NewWeeklyBars stacks series over weeks starting at the Mondays in weeks.
func NewWeeklyBars(weeks []time.Time, series []WeeklySeries) WeeklyBars {
	c := WeeklyBars{Width: 720, Height: 220, Left: 44, Right: 708, Top: 12, Bottom: 190}
	var peak int64
	totals := make([]int64, len(weeks))
	for si, s := range series {
		line := ChartLine{Name: s.Name, Class: "series-" + strconv.Itoa(si%chartPalette)}
		for i, n := range s.Counts {
			totals[i] += n
			line.Total += n
		}
		c.Legend = append(c.Legend, line)
	}
	for _, t := range totals {
		peak = max(peak, t)
	}
	c.Empty = peak == 0
	top := niceCeil(float64(peak))
	y := func(v float64) float64 { return c.Bottom - v/top*(c.Bottom-c.Top) }
	for i := 0; i <= 4; i++ {
		v := top * float64(i) / 4
		c.YTicks = append(c.YTicks, ChartTick{Pos: y(v), Label: trimFloat(v)})
	}
	if len(weeks) == 0 {
		return c
	}
	slot := (c.Right - c.Left) / float64(len(weeks))
	for i, wk := range weeks {
		b := WeeklyBar{Label: wk.UTC().Format("2 Jan"), X: c.Left + float64(i)*slot + slot*0.15, W: slot * 0.7, Total: totals[i]}
		b.LabelX = b.X + b.W/2
		var below float64
		for si, s := range series {
			n := s.Counts[i]
			if n == 0 {
				continue
			}
			seg := BarSegment{Y: y(below + float64(n)), H: y(below) - y(below+float64(n)), Class: "series-" + strconv.Itoa(si%chartPalette),
				Title: s.Name + ", week of " + b.Label + ": " + strconv.FormatInt(n, 10)}
			below += float64(n)
			b.Segments = append(b.Segments, seg)
		}
		c.Bars = append(c.Bars, b)
	}
	return c
}

// ShowLabel thins the week labels to at most eight under the bars.
func (c WeeklyBars) ShowLabel(i int) bool {
	every := (len(c.Bars) + 7) / 8
	return every <= 1 || i%every == 0
}
