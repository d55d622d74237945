package ui

import (
	"context"
	"encoding/csv"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/a-h/templ"

	"github.com/leadgate/leadgate/handlers"
	"github.com/leadgate/leadgate/lifecycle"
	"github.com/leadgate/leadgate/lifecycle/apply"
	"github.com/leadgate/leadgate/models"
	"github.com/leadgate/leadgate/views"
)

// Sales report defaults and limits.
const (
	salesDefaultDays  = 30
	salesMaxDays      = 366
	salesDefaultStale = 14
	staleListLimit    = 100
	staleCSVLimit     = 10000
	dateLayout        = "2006-01-02"
)

// salesRange is the report's window [From, To) and stale threshold.
type salesRange struct {
	From, To  time.Time // To is the day after the last day shown
	StaleDays int
}

// parseSalesRange reads ?from=&to=&stale_days= (dates inclusive, UTC),
// defaulting to the last 30 days and 14 idle days.
func parseSalesRange(q url.Values, now time.Time) (salesRange, views.FieldErrors) {
	errs := views.FieldErrors{}
	today := now.UTC().Truncate(24 * time.Hour)
	rg := salesRange{To: today.Add(24 * time.Hour), From: today.Add(-(salesDefaultDays - 1) * 24 * time.Hour), StaleDays: salesDefaultStale}
	if raw := q.Get("to"); raw != "" {
		if t, err := time.Parse(dateLayout, raw); err == nil {
			rg.To = t.Add(24 * time.Hour)
		} else {
			errs["to"] = "“To” must be a date (YYYY-MM-DD)."
		}
	}
	if raw := q.Get("from"); raw != "" {
		if t, err := time.Parse(dateLayout, raw); err == nil {
			rg.From = t
		} else {
			errs["from"] = "“From” must be a date (YYYY-MM-DD)."
		}
	}
	if raw := q.Get("stale_days"); raw != "" {
		n, err := strconv.Atoi(raw)
		if err != nil || n < 1 || n > 365 {
			errs["stale_days"] = "Stale after must be a whole number of days from 1 to 365."
		} else {
			rg.StaleDays = n
		}
	}
	switch {
	case errs.Any():
	case !rg.From.Before(rg.To):
		errs["from"] = "“From” must not be after “To”."
	case rg.To.Sub(rg.From) > salesMaxDays*24*time.Hour:
		errs["from"] = fmt.Sprintf("Choose a range of at most %d days.", salesMaxDays)
	}
	if errs.Any() {
		// Report on the default window rather than nothing.
		def, _ := parseSalesRange(url.Values{}, now)
		def.StaleDays = max(rg.StaleDays, 1)
		return def, errs
	}
	return rg, errs
}

func (rg salesRange) query() string {
	return url.Values{"from": {rg.From.Format(dateLayout)}, "to": {rg.To.Add(-24 * time.Hour).Format(dateLayout)},
		"stale_days": {strconv.Itoa(rg.StaleDays)}}.Encode()
}

// ShowSales renders the sales report over the chosen range.
func (u *UI) ShowSales(w http.ResponseWriter, r *http.Request) {
	ws := handlers.WorkspaceFrom(r)
	rg, errs := parseSalesRange(r.URL.Query(), u.now())
	v, err := u.salesReport(r.Context(), ws, rg, staleListLimit)
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	v.Errors = errs
	u.page(w, r, http.StatusOK, views.NavSales, "Sales", func(m views.PageMeta) templ.Component { return views.SalesPage(m, v) })
}

func (u *UI) salesReport(ctx context.Context, ws models.Workspace, rg salesRange, staleLimit int) (views.SalesView, error) {
	now := u.now()
	v := views.SalesView{Workspace: wsRef(ws), From: rg.From.Format(dateLayout), To: rg.To.Add(-24 * time.Hour).Format(dateLayout),
		StaleDays: rg.StaleDays, Query: rg.query(), Now: now}
	rules, err := apply.LoadRules(ctx, u.Store, ws.ID)
	if err != nil {
		return v, err
	}
	if v.Conversion, v.Movers, err = u.conversion(ctx, ws.ID, rules, rg); err != nil {
		return v, err
	}
	if err := u.salesTrends(ctx, ws.ID, rules, rg, &v); err != nil {
		return v, err
	}
	leads, err := u.Store.LeadsBySourceList(ctx, ws.ID, rg.From, rg.To)
	if err != nil {
		return v, err
	}
	for _, l := range leads {
		name := l.SourceName
		if name == "" {
			name = "source #" + strconv.FormatInt(l.SourceID, 10)
		}
		v.Sources = append(v.Sources, views.LeadSourceRow{Source: name, Channel: l.Channel, NewLeads: l.NewLeads, Events: l.Events, Contacts: l.Contacts})
	}
	idleSince := now.Add(-time.Duration(rg.StaleDays) * 24 * time.Hour)
	counts, err := u.Store.StaleLeadCounts(ctx, ws.ID, idleSince, rules.Terminal)
	if err != nil {
		return v, err
	}
	for _, c := range counts {
		v.StaleCounts = append(v.StaleCounts, views.StaleCountRow{Stage: orDefault(c.Stage, "(no stage)"), Contacts: c.Contacts})
	}
	stale, err := u.Store.StaleLeadList(ctx, ws.ID, idleSince, rules.Terminal, staleLimit+1)
	if err != nil {
		return v, err
	}
	if len(stale) > staleLimit {
		stale, v.StaleMore = stale[:staleLimit], true
	}
	for _, s := range stale {
		row := contactRow(models.Contact{ID: s.ID, Email: s.Email, Phone: s.Phone, FirstName: s.FirstName, LastName: s.LastName,
			Stage: s.Stage, LastActivityAt: s.LastActivityAt})
		v.Stale = append(v.Stale, views.StaleRow{Contact: row, IdleDays: int(now.Sub(s.LastActivityAt).Hours() / 24)})
	}
	return v, nil
}

// conversion builds the funnel over the range from stage history: how many
// contacts reached each ordered stage, the share that went on to the next,
// and how long stays that began in the range lasted.
func (u *UI) conversion(ctx context.Context, wsID int64, rules lifecycle.Rules, rg salesRange) ([]views.ConversionRow, int64, error) {
	reach, err := u.Store.StageReachList(ctx, wsID, rules.Stages, rg.From, rg.To)
	if err != nil {
		return nil, 0, err
	}
	stays, err := u.Store.StageStayList(ctx, wsID, rg.From, rg.To)
	if err != nil {
		return nil, 0, err
	}
	stayOf := map[string]models.StageStay{}
	for _, s := range stays {
		stayOf[s.Stage] = s
	}
	// reached[i]: contacts whose furthest stage in the range is at least i.
	reached := make([]int64, len(rules.Stages)+1)
	var movers int64
	for _, rc := range reach {
		movers += rc.Contacts
		for i := 0; i < rc.Rank && i < len(rules.Stages); i++ {
			reached[i] += rc.Contacts
		}
	}
	var rows []views.ConversionRow
	all := append(append([]string{}, rules.Stages...), rules.Terminal...)
	for i, stage := range all {
		st := stayOf[stage]
		row := views.ConversionRow{Stage: stage, Entries: st.Entries, Left: st.Left, MedianStay: duration(st.MedianSeconds), AvgStay: duration(st.AvgSeconds), NextRate: "–"}
		if i < len(rules.Stages) {
			row.Reached = reached[i]
			if reached[0] > 0 {
				row.BarPct = int(math.Round(100 * float64(reached[i]) / float64(reached[0])))
			}
			if i+1 < len(rules.Stages) && reached[i] > 0 {
				row.NextRate = fmt.Sprintf("%.0f%%", 100*float64(reached[i+1])/float64(reached[i]))
			}
		} else {
			row.Stage += " (terminal)"
			row.Reached = st.Entries
		}
		rows = append(rows, row)
	}
	return rows, movers, nil
}

// duration formats seconds as the largest sensible unit ("3.5 days", "4 h", "12 min").
func duration(secs *float64) string {
	if secs == nil {
		return "–"
	}
	d := time.Duration(*secs * float64(time.Second))
	switch {
	case d >= 48*time.Hour:
		return strconv.FormatFloat(d.Hours()/24, 'f', 1, 64) + " days"
	case d >= 2*time.Hour:
		return strconv.FormatFloat(d.Hours(), 'f', 1, 64) + " h"
	case d >= time.Minute:
		return strconv.Itoa(int(d.Minutes())) + " min"
	}
	return strconv.Itoa(int(d.Seconds())) + " s"
}

// ExportSalesCSV downloads one table of the report (?what=conversion|sources|stale).
// The stale list holds personal data, so every export is audited.
func (u *UI) ExportSalesCSV(w http.ResponseWriter, r *http.Request) {
	ws := handlers.WorkspaceFrom(r)
	what := r.URL.Query().Get("what")
	if what != "conversion" && what != "sources" && what != "stale" {
		u.NotFound(w, r)
		return
	}
	rg, errs := parseSalesRange(r.URL.Query(), u.now())
	if errs.Any() {
		u.flashRedirect(w, r, "/w/"+ws.Slug+"/sales", "error", "The CSV range is not valid: pick dates again.")
		return
	}
	v, err := u.salesReport(r.Context(), ws, rg, staleCSVLimit)
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	err = u.Store.Tx(r.Context(), func(tx *models.Store) error {
		return auditUI(r.Context(), tx, r, ws.ID, "sales.export", "sales_report", what,
			nil, map[string]any{"from": v.From, "to": v.To, "stale_days": v.StaleDays})
	})
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="%s-sales-%s-%s-to-%s.csv"`, ws.Slug, what, v.From, v.To))
	cw := csv.NewWriter(w)
	for _, rec := range salesCSV(what, v) {
		_ = cw.Write(rec)
	}
	cw.Flush()
}

func salesCSV(what string, v views.SalesView) [][]string {
	n := func(i int64) string { return strconv.FormatInt(i, 10) }
	var out [][]string
	switch what {
	case "conversion":
		out = append(out, []string{"stage", "reached", "to_next", "entries", "left", "median_stay", "average_stay"})
		for _, c := range v.Conversion {
			out = append(out, []string{c.Stage, n(c.Reached), c.NextRate, n(c.Entries), n(c.Left), c.MedianStay, c.AvgStay})
		}
	case "sources":
		out = append(out, []string{"source", "channel", "new_leads", "events", "contacts"})
		for _, s := range v.Sources {
			out = append(out, []string{s.Source, s.Channel, n(s.NewLeads), n(s.Events), n(s.Contacts)})
		}
	case "stale":
		out = append(out, []string{"contact_id", "name", "email", "phone", "stage", "idle_days", "last_activity_at"})
		for _, s := range v.Stale {
			c := s.Contact
			out = append(out, []string{c.ID, c.Name, c.Email, c.Phone, c.Stage, strconv.Itoa(s.IdleDays), c.LastActivity.UTC().Format(time.RFC3339)})
		}
	}
	for _, rec := range out[1:] {
		for i := range rec {
			rec[i] = csvSafe(rec[i])
		}
	}
	return out
}

// csvSafe keeps a spreadsheet from reading a lead's text as a formula.
func csvSafe(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}
