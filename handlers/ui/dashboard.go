package ui

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"time"

	"github.com/a-h/templ"

	"github.com/leadgate/leadgate/handlers"
	"github.com/leadgate/leadgate/internal/principal"
	"github.com/leadgate/leadgate/lifecycle/apply"
	"github.com/leadgate/leadgate/models"
	"github.com/leadgate/leadgate/views"
)

// ShowDashboard renders the pipeline health page of the workspace.
func (u *UI) ShowDashboard(w http.ResponseWriter, r *http.Request) {
	rg, err := parseChartRange(r.URL.Query().Get("range"))
	if err != nil {
		u.errorPage(w, r, views.ErrorView{Status: http.StatusBadRequest, Title: "Unknown time range", Message: err.Error()})
		return
	}
	v, err := u.dashboard(r.Context(), r, rg)
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	u.page(w, r, http.StatusOK, views.NavDashboard, "Pipeline health", func(m views.PageMeta) templ.Component {
		return views.DashboardPage(m, v)
	})
}

// HealthFragment is the part of the dashboard htmx polls every 10 s.
func (u *UI) HealthFragment(w http.ResponseWriter, r *http.Request) {
	rg, err := parseChartRange(r.URL.Query().Get("range"))
	if err != nil {
		u.errorPage(w, r, views.ErrorView{Status: http.StatusBadRequest, Title: "Unknown time range", Message: err.Error()})
		return
	}
	v, err := u.dashboard(r.Context(), r, rg)
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	u.render(w, r, http.StatusOK, views.HealthPanel(v))
}

// dashboard gathers the counters, the chart and per-source activity.
func (u *UI) dashboard(ctx context.Context, r *http.Request, rg chartRange) (views.DashboardView, error) {
	ws := handlers.WorkspaceFrom(r)
	now := u.now().UTC()
	p, _ := principal.From(ctx)
	v := views.DashboardView{Workspace: wsRef(ws), Now: now, CanEdit: models.RoleAtLeast(p.Role, models.RoleEditor)}
	v.Ranges = rangeChoices(rg)
	if rg.Key != defaultChartRange {
		v.Range = rg.Key // the polled fragment keeps a chosen range; the default needs none
	}
	st, err := u.Store.StatsGet(ctx, ws.ID)
	if err != nil {
		return v, err
	}
	e := st.Events
	v.Received, v.Duplicates, v.DeadLetters, v.OutboxPending = e.Received, e.Duplicates, st.DeadLetters, st.OutboxPending
	v.DuplicateRate = "–"
	if e.Received > 0 {
		v.DuplicateRate = fmt.Sprintf("%.1f%%", 100*float64(e.Duplicates)/float64(e.Received))
	}
	v.Counters = eventCounters(e)
	flagQuarantine(v.Counters, e, "/w/"+ws.Slug+"/dead-letters")
	firing, err := u.Store.AlarmsFiringAt(ctx, ws.ID, now)
	if err != nil {
		return v, err
	}
	v.Alarms = alarmBanners(ws, firing, now)
	depth, err := u.Store.DeadLetterDepthGet(ctx, ws.ID)
	if err != nil {
		return v, err
	}
	v.OldestDead = depth.Oldest
	if v.Funnel, err = u.funnel(ctx, ws.ID); err != nil {
		return v, err
	}

	sources, err := u.Store.SourceList(ctx, ws.ID)
	if err != nil {
		return v, err
	}
	activity, err := u.Store.SourceActivityList(ctx, ws.ID, now)
	if err != nil {
		return v, err
	}
	for _, s := range sources {
		a := activity[s.ID]
		v.Sources = append(v.Sources, views.SourceHealth{ID: s.ID, Name: s.Name, Kind: s.Kind, Channel: s.Channel,
			Enabled: s.Enabled, LastEvent: a.LastEvent, Events24h: a.Last24h})
	}
	v.Chart, v.ChannelChart, err = u.rateCharts(ctx, ws.ID, sources, now, rg)
	return v, err
}

// eventCounters lays out CONTRACT.md's counters with what each one means.
func eventCounters(e models.EventCounts) []views.Counter {
	return []views.Counter{
		{Key: "received", Label: "Received", Value: e.Received, Help: "Delivery attempts, retries included"},
		{Key: "accepted", Label: "Accepted", Value: e.Accepted, Help: "Unique events stored"},
		{Key: "duplicates", Label: "Duplicates", Value: e.Duplicates, Help: "Retries recognised and absorbed", Tone: "warn"},
		{Key: "applied", Label: "Applied", Value: e.Applied, Help: "Changed a contact", Tone: "good"},
		{Key: "unchanged", Label: "Unchanged", Value: e.Unchanged, Help: "Valid, nothing to change"},
		{Key: "quarantined", Label: "Quarantined", Value: e.Quarantined, Help: "Sent to dead letters for review", Tone: "bad"},
		{Key: "rejected", Label: "Rejected", Value: e.Rejected, Help: "Not a lead: no email or phone", Tone: "bad"},
		{Key: "dropped", Label: "Dropped", Value: e.Dropped, Help: "Filtered or stopped by the loop guard"},
		{Key: "unresolved", Label: "Unresolved", Value: e.Unresolved, Help: "Pending, waiting or retrying", Tone: "warn"},
	}
}

// QuarantineFlagShare is the share of accepted events quarantined above which the outcome grid flags it
// (with at least QuarantineFlagMin accepted, so that one bad event of three is not an emergency).
const (
	QuarantineFlagShare = 0.10
	QuarantineFlagMin   = 20
)

// flagQuarantine marks the quarantined counter when its share of accepted events is above the threshold.
func flagQuarantine(cs []views.Counter, e models.EventCounts, href string) {
	if e.Accepted < QuarantineFlagMin {
		return
	}
	share := float64(e.Quarantined) / float64(e.Accepted)
	if share <= QuarantineFlagShare {
		return
	}
	for i := range cs {
		if cs[i].Key == "quarantined" {
			cs[i].Flag = fmt.Sprintf("%.0f %% of accepted events are quarantined (above %.0f %%).", 100*share, 100*QuarantineFlagShare)
			cs[i].FlagHref = href
		}
	}
}

// rateCharts turns per-bucket counts into events-per-minute lines, one per
// source and, summed over the sources of each channel, one per channel, over
// the chosen range zoomed to its data.
func (u *UI) rateCharts(ctx context.Context, wsID int64, sources []models.Source, now time.Time, rg chartRange) (views.Chart, views.Chart, error) {
	bucket := rg.Bucket
	rates, err := u.Store.EventRates(ctx, wsID, now.Add(-rg.Span).Truncate(bucket), bucket)
	if err != nil {
		return views.Chart{}, views.Chart{}, fmt.Errorf("charting events: %w", err)
	}
	var first *time.Time
	if len(rates) > 0 {
		first = &rates[0].Bucket // ordered by bucket
	}
	start := chartWindow(rg, now, first)
	n := int(now.Sub(start)/bucket) + 1
	index := map[int64]int{}
	series := make([]views.ChartSeries, 0, len(sources))
	for _, s := range sources {
		index[s.ID] = len(series)
		series = append(series, views.ChartSeries{Name: s.Name, Values: make([]float64, n)})
	}
	perMinute := bucket.Minutes()
	for _, rt := range rates {
		i, ok := index[rt.SourceID]
		b := int(rt.Bucket.Sub(start) / bucket)
		if !ok || b < 0 || b >= n {
			continue // a deleted source, or clock skew at the edges
		}
		series[i].Values[b] += float64(rt.N) / perMinute
		series[i].Total += rt.N
	}
	bySource := views.NewRateChart(start, bucket, series)
	byChannel := views.NewRateChart(start, bucket, channelSeries(sources, series))
	byChannel.By = "channel"
	for _, c := range []*views.Chart{&bySource, &byChannel} {
		c.RangeLabel, c.End = rg.Label, now
	}
	return bySource, byChannel, nil
}

// channelSeries sums per-source series (in sources' order) by the sources'
// channel, channels in the order they first appear.
func channelSeries(sources []models.Source, perSource []views.ChartSeries) []views.ChartSeries {
	index := map[string]int{}
	var out []views.ChartSeries
	for i, s := range sources {
		name := s.Channel
		if name == "" {
			name = "(no channel)"
		}
		j, ok := index[name]
		if !ok {
			j = len(out)
			index[name] = j
			out = append(out, views.ChartSeries{Name: name, Values: make([]float64, len(perSource[i].Values))})
		}
		for b, v := range perSource[i].Values {
			out[j].Values[b] += v
		}
		out[j].Total += perSource[i].Total
	}
	return out
}

// funnel counts live contacts per stage in the order of the rules in force;
// stages the rules no longer know come last, as they were found.
func (u *UI) funnel(ctx context.Context, wsID int64) (views.Funnel, error) {
	rules, err := apply.LoadRules(ctx, u.Store, wsID)
	if err != nil {
		return views.Funnel{}, err
	}
	counts, err := u.Store.ContactStageCounts(ctx, wsID)
	if err != nil {
		return views.Funnel{}, err
	}
	var stages []views.FunnelStage
	for _, s := range rules.Stages {
		stages = append(stages, views.FunnelStage{Name: s, Count: counts[s]})
		delete(counts, s)
	}
	for _, s := range rules.Terminal {
		stages = append(stages, views.FunnelStage{Name: s, Count: counts[s], Terminal: true})
		delete(counts, s)
	}
	rest := make([]string, 0, len(counts))
	for s := range counts {
		rest = append(rest, s)
	}
	sort.Strings(rest)
	for _, s := range rest {
		name := s
		if name == "" {
			name = "(no stage)"
		}
		stages = append(stages, views.FunnelStage{Name: name, Count: counts[s], Terminal: true})
	}
	return views.NewFunnel(stages), nil
}
