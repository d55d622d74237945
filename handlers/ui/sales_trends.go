package ui

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/leadgate/leadgate/lifecycle"
	"github.com/leadgate/leadgate/views"
)

// salesTrends fills the weekly new-leads chart, conversion per source and
// the time-to-stage trend of the report's range.
func (u *UI) salesTrends(ctx context.Context, wsID int64, rules lifecycle.Rules, rg salesRange, v *views.SalesView) error {
	weekly, err := u.Store.WeeklyLeadsList(ctx, wsID, rg.From, rg.To)
	if err != nil {
		return err
	}
	weeks := mondays(rg.From, rg.To)
	weekIndex := map[time.Time]int{}
	for i, w := range weeks {
		weekIndex[w] = i
	}
	seriesIndex := map[string]int{}
	var series []views.WeeklySeries
	for _, w := range weekly {
		name := sourceLabel(w.SourceName, w.SourceID, w.Channel)
		j, ok := seriesIndex[name]
		if !ok {
			j = len(series)
			seriesIndex[name] = j
			series = append(series, views.WeeklySeries{Name: name, Counts: make([]int64, len(weeks))})
		}
		if i, ok := weekIndex[w.Week.UTC()]; ok {
			series[j].Counts[i] += w.NewLeads
		}
	}
	v.Weekly = views.NewWeeklyBars(weeks, series)
	v.OrderedStages = rules.Stages

	reach, err := u.Store.SourceReachList(ctx, wsID, rules.Stages, rg.From, rg.To)
	if err != nil {
		return err
	}
	rowIndex := map[string]int{}
	var counts [][]int64 // per row, contacts whose furthest rank is r (index r)
	for _, r := range reach {
		name := sourceLabel(r.SourceName, r.SourceID, "")
		key := name + "\x00" + r.Channel
		i, ok := rowIndex[key]
		if !ok {
			i = len(v.SourceConversion)
			rowIndex[key] = i
			v.SourceConversion = append(v.SourceConversion, views.SourceConversionRow{Source: name, Channel: r.Channel})
			counts = append(counts, make([]int64, len(rules.Stages)+1))
		}
		v.SourceConversion[i].Leads += r.Contacts
		if r.Rank >= 0 && r.Rank <= len(rules.Stages) {
			counts[i][r.Rank] += r.Contacts
		}
	}
	for i := range v.SourceConversion {
		row := &v.SourceConversion[i]
		for s := 1; s <= len(rules.Stages); s++ {
			var atLeast int64
			for r := s; r <= len(rules.Stages); r++ {
				atLeast += counts[i][r]
			}
			row.Reached = append(row.Reached, views.ShareCell{Count: atLeast, Share: percent(atLeast, row.Leads)})
		}
	}

	arrivals, err := u.Store.StageArrivalList(ctx, wsID, rg.From, rg.To)
	if err != nil {
		return err
	}
	stageIndex := map[string]int{}
	for i, s := range rules.Stages {
		stageIndex[s] = i
	}
	rows := make([]views.StageTrendRow, len(weeks))
	for i, w := range weeks {
		rows[i] = views.StageTrendRow{Week: w.Format("2 Jan 2006"), Cells: make([]string, len(rules.Stages))}
		for j := range rows[i].Cells {
			rows[i].Cells[j] = "–"
		}
	}
	for _, a := range arrivals {
		wi, ok := weekIndex[a.Week.UTC()]
		si, known := stageIndex[a.Stage]
		if !ok || !known {
			continue
		}
		secs := a.MedianSeconds
		rows[wi].Cells[si] = duration(&secs) + " (" + strconv.FormatInt(a.Contacts, 10) + ")"
		rows[wi].Any = true
	}
	v.StageTrend = rows
	return nil
}

// mondays lists the UTC Monday starting each ISO week that meets [from, to).
func mondays(from, to time.Time) []time.Time {
	d := from.UTC().Truncate(24 * time.Hour)
	d = d.AddDate(0, 0, -((int(d.Weekday()) + 6) % 7))
	var out []time.Time
	for ; d.Before(to); d = d.AddDate(0, 0, 7) {
		out = append(out, d)
	}
	return out
}

// sourceLabel names a source (a deleted one by id), with its channel if given.
func sourceLabel(name string, id int64, channel string) string {
	if name == "" {
		name = "source #" + strconv.FormatInt(id, 10)
	}
	if channel != "" {
		name += " · " + channel
	}
	return name
}

func percent(n, of int64) string {
	if of == 0 {
		return "–"
	}
	return fmt.Sprintf("%.0f%%", 100*float64(n)/float64(of))
}
