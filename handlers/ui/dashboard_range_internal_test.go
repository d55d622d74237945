package ui

import (
	"testing"
	"time"
)

// A chart's domain starts at the first bucket with data in the range, keeps
// at least chartMinBuckets points, and spans the whole range when empty.
func TestChartWindowStartsAtTheFirstDataPoint(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 10, 12, 34, 56, 0, time.UTC)
	day, err := parseChartRange("")
	if err != nil || day.Key != "24h" {
		t.Fatalf("default range %+v %v", day, err)
	}
	week, _ := parseChartRange("7d")
	at := func(s string) *time.Time { v, _ := time.Parse(time.RFC3339, s); return &v }
	for _, c := range []struct {
		name  string
		rg    chartRange
		first *time.Time
		want  string
	}{
		{"empty: the whole day", day, nil, "2026-03-09T12:30:00Z"},
		{"data since 09:02: from its bucket", day, at("2026-03-10T09:02:10Z"), "2026-03-10T09:00:00Z"},
		{"data only now: twelve buckets back", day, at("2026-03-10T12:33:00Z"), "2026-03-10T11:30:00Z"},
		{"a week, data 3 days old", week, at("2026-03-07T08:15:00Z"), "2026-03-07T08:00:00Z"},
	} {
		if got := chartWindow(c.rg, now, c.first).Format(time.RFC3339); got != c.want {
			t.Errorf("%s: starts %s, want %s", c.name, got, c.want)
		}
	}
	if _, err := parseChartRange("90d"); err == nil {
		t.Error("90d accepted")
	}
}
