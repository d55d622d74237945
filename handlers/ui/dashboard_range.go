package ui

import (
	"fmt"
	"time"

	"github.com/leadgate/leadgate/views"
)

// chartRange is one choice of the dashboard's time-range picker: how far back
// the charts look and how wide one point is (about 60 to 300 points each).
type chartRange struct {
	Key    string
	Label  string // "last 24 hours", for captions
	Span   time.Duration
	Bucket time.Duration
}

const defaultChartRange = "24h"

// chartMinBuckets keeps a zoomed chart at least this many points wide, so a
// burst in the last minutes still reads as a shape and not a vertical bar.
const chartMinBuckets = 12

func chartRanges() []chartRange {
	return []chartRange{
		{Key: "1h", Label: "last hour", Span: time.Hour, Bucket: time.Minute},
		{Key: "24h", Label: "last 24 hours", Span: 24 * time.Hour, Bucket: 5 * time.Minute},
		{Key: "7d", Label: "last 7 days", Span: 7 * 24 * time.Hour, Bucket: time.Hour},
		{Key: "30d", Label: "last 30 days", Span: 30 * 24 * time.Hour, Bucket: 6 * time.Hour},
	}
}

// parseChartRange reads ?range=; empty means the default.
func parseChartRange(raw string) (chartRange, error) {
	if raw == "" {
		raw = defaultChartRange
	}
	for _, rg := range chartRanges() {
		if rg.Key == raw {
			return rg, nil
		}
	}
	return chartRange{}, fmt.Errorf("unknown time range %q: choose 1h, 24h, 7d or 30d", raw)
}

// rangeChoices lays out the picker with cur marked.
func rangeChoices(cur chartRange) []views.RangeChoice {
	var out []views.RangeChoice
	for _, rg := range chartRanges() {
		out = append(out, views.RangeChoice{Key: rg.Key, Label: rg.Key, Title: rg.Label, Current: rg.Key == cur.Key})
	}
	return out
}

// chartWindow is where a chart's domain starts: at the first bucket holding
// data inside the range (so activity fills the plot instead of crowding one
// edge), never narrower than chartMinBuckets, and the whole range when empty.
func chartWindow(rg chartRange, now time.Time, first *time.Time) time.Time {
	rangeStart := now.Add(-rg.Span).Truncate(rg.Bucket)
	if first == nil || first.Before(rangeStart) {
		return rangeStart
	}
	start := first.Truncate(rg.Bucket)
	if latest := now.Truncate(rg.Bucket).Add(-chartMinBuckets * rg.Bucket); start.After(latest) {
		start = latest
	}
	if start.Before(rangeStart) {
		start = rangeStart
	}
	return start
}
