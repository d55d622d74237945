package ui

import (
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/leadgate/leadgate/models"
	"github.com/leadgate/leadgate/views"
)

// timelinePageSize is how many entries one page of the contact's timeline shows.
const timelinePageSize = 50

// contactTimeline merges everything known about a contact into one history,
// newest first: events with their decision and reason, stage changes,
// observed field values with their provenance, CRM writes, conflicts (dead
// letters) and operator actions.
func contactTimeline(ws views.WorkspaceRef, x models.ContactExport, sourceNames map[int64]string) []views.TimelineItem {
	var out []views.TimelineItem
	for _, e := range x.Events {
		row := eventRow(e, sourceNames)
		out = append(out, views.TimelineItem{At: e.OccurredAt, Kind: "event", Title: row.EventType + " from " + row.SourceName,
			Status: e.Status, Detail: e.Reason, Href: ws.Path() + "/events/" + e.ID,
			Meta: "received " + e.ReceivedAt.UTC().Format("2006-01-02 15:04:05") + " UTC · " + strconv.Itoa(e.Attempts) + " attempt(s)"})
	}
	for _, h := range x.StageHistory {
		title := "Entered " + h.ToStage
		if h.FromStage != "" {
			title = h.FromStage + " → " + h.ToStage
		}
		meta := "by " + h.Actor
		if h.RuleVersion > 0 {
			meta += " · rules v" + strconv.Itoa(h.RuleVersion)
		}
		out = append(out, views.TimelineItem{At: h.OccurredAt, Kind: "stage", Title: title, Detail: h.Reason, Meta: meta})
	}
	out = append(out, observationItems(x.Observations)...)
	for _, o := range x.Outbox {
		title := strings.ReplaceAll(o.Kind, "_", " ") + ": " + strings.ReplaceAll(o.Action, "_", " ")
		if o.Kind == models.OutboxCRMUpsert {
			title = "CRM upsert, version " + strconv.FormatInt(o.Version, 10)
		}
		meta := strconv.Itoa(o.Attempts) + " attempt(s) · " + o.StableID
		if o.SentAt != nil {
			meta = "sent " + o.SentAt.UTC().Format("2006-01-02 15:04:05") + " UTC · " + meta
		}
		out = append(out, views.TimelineItem{At: o.CreatedAt, Kind: "crm", Title: title, Status: o.Status, Detail: o.LastError, Meta: meta})
	}
	for _, d := range x.DeadLetters {
		meta := ""
		if d.ResolvedBy != nil {
			meta = "resolved by " + *d.ResolvedBy
			if d.Resolution != nil && *d.Resolution != "" {
				meta += ": " + *d.Resolution
			}
		}
		out = append(out, views.TimelineItem{At: d.CreatedAt, Kind: "conflict", Title: strings.ReplaceAll(d.Kind, "_", " "),
			Status: d.Status, Detail: d.Reason, Meta: meta, Href: ws.Path() + "/dead-letters/" + strconv.FormatInt(d.ID, 10)})
	}
	for _, a := range x.Audit {
		out = append(out, views.TimelineItem{At: a.At, Kind: "action", Title: strings.ReplaceAll(a.Action, "_", " "), Meta: "by " + a.Actor})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].At.After(out[j].At) })
	return out
}

// timelinePage cuts page (1-based, newest first) out of the whole timeline;
// a page past the end is the last one.
func timelinePage(all []views.TimelineItem, page int) views.TimelinePage {
	pages := max(1, (len(all)+timelinePageSize-1)/timelinePageSize)
	page = min(max(page, 1), pages)
	lo := (page - 1) * timelinePageSize
	hi := min(lo+timelinePageSize, len(all))
	return views.TimelinePage{Items: all[lo:hi], Page: page, Pages: pages, Total: len(all)}
}

// stagePath summarizes a contact's stage history in order, e.g.
// "Discovered → Engaged → SQL, 3 days": the stages it went through and the
// time from entering the first to entering the last.
func stagePath(history []models.StageChange) string {
	if len(history) == 0 {
		return ""
	}
	var path []string
	if from := history[0].FromStage; from != "" {
		path = append(path, from)
	}
	for _, h := range history {
		if len(path) == 0 || path[len(path)-1] != h.ToStage {
			path = append(path, h.ToStage)
		}
	}
	out := strings.Join(path, " → ")
	if len(history) > 1 || history[0].FromStage != "" {
		out += ", " + stagePathSpan(history[len(history)-1].OccurredAt.Sub(history[0].OccurredAt))
	}
	return out
}

// stagePathSpan is a duration as a person would say it: "3 days", "5 hours".
func stagePathSpan(d time.Duration) string {
	plural := func(n int, unit string) string {
		if n == 1 {
			return "1 " + unit
		}
		return strconv.Itoa(n) + " " + unit + "s"
	}
	switch {
	case d >= 48*time.Hour:
		return plural(int(d/(24*time.Hour)), "day")
	case d >= 2*time.Hour:
		return plural(int(d/time.Hour), "hour")
	case d >= time.Minute:
		return plural(int(d/time.Minute), "minute")
	}
	return "under a minute"
}

// observationItems folds the values one event proposed into one entry, and
// keeps each human correction on its own.
func observationItems(obs []models.Observation) []views.TimelineItem {
	var out []views.TimelineItem
	byEvent := map[string]int{}
	for _, o := range obs {
		value := o.Field + " = " + strconv.Quote(o.Value)
		if o.ExplicitDelete {
			value = o.Field + " cleared"
		}
		if o.Human {
			out = append(out, views.TimelineItem{At: o.ObservedAt, Kind: "observation", Title: "Corrected " + o.Field,
				Detail: value, Meta: "human correction by " + o.Actor})
			continue
		}
		key := o.Source + "|" + o.ObservedAt.String()
		if o.EventID != nil {
			key = *o.EventID
		}
		if i, ok := byEvent[key]; ok {
			out[i].Detail += " · " + value
			continue
		}
		byEvent[key] = len(out)
		out = append(out, views.TimelineItem{At: o.ObservedAt, Kind: "observation", Title: "Fields observed",
			Detail: value, Meta: "source " + o.Source + " · matched on " + o.Basis})
	}
	return out
}
