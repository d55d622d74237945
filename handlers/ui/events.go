package ui

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/a-h/templ"
	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"

	"github.com/leadgate/leadgate/handlers"
	"github.com/leadgate/leadgate/ingest/normalize"
	"github.com/leadgate/leadgate/models"
	"github.com/leadgate/leadgate/views"
)

// eventsPageSize is how many events the explorer shows per page.
const eventsPageSize = 50

// eventStatusOrder is the status filter's order: outcomes, then unresolved states.
var eventStatusOrder = []string{models.EventApplied, models.EventUnchanged, models.EventQuarantined, models.EventRejected,
	models.EventDropped, models.EventPending, models.EventWaiting, models.EventRetrying}

// ListEvents renders the explorer: ?status=&source=&cursor= (keyset pagination).
func (u *UI) ListEvents(w http.ResponseWriter, r *http.Request) {
	ws := handlers.WorkspaceFrom(r)
	q := r.URL.Query()
	v := views.EventsView{Workspace: wsRef(ws), Status: q.Get("status"), SourceID: q.Get("source"), Now: u.now()}
	f := models.EventFilter{WorkspaceID: ws.ID}
	if handlers.IsEventStatus(v.Status) {
		f.Status = v.Status
	} else {
		v.Status = ""
	}
	if id, err := strconv.ParseInt(v.SourceID, 10, 64); err == nil {
		f.SourceID = id
	} else {
		v.SourceID = ""
	}
	v.Lead = strings.TrimSpace(q.Get("lead"))
	f.LeadEmail, f.LeadPhone, v.LeadError = leadSearch(v.Lead)
	page := models.Page{Limit: eventsPageSize, Cursor: q.Get("cursor")}
	if _, err := uuid.Parse(page.Cursor); err != nil {
		page.Cursor = ""
	}
	sources, err := u.Store.SourceList(r.Context(), ws.ID)
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	names := map[int64]string{}
	for _, s := range sources {
		names[s.ID] = s.Name
		v.Sources = append(v.Sources, views.Option{Value: strconv.FormatInt(s.ID, 10), Label: s.Name})
	}
	v.HasSources = len(sources) > 0
	for _, s := range eventStatusOrder {
		v.Statuses = append(v.Statuses, views.Option{Value: s, Label: s})
	}
	var list []models.Event
	if v.LeadError == "" {
		if list, err = u.Store.EventList(r.Context(), f, page); err != nil {
			u.serverError(w, r, err)
			return
		}
	}
	for _, e := range list {
		v.Events = append(v.Events, eventRow(e, names))
	}
	base := url.Values{}
	if v.Status != "" {
		base.Set("status", v.Status)
	}
	if v.SourceID != "" {
		base.Set("source", v.SourceID)
	}
	if v.Lead != "" {
		base.Set("lead", v.Lead)
	}
	path := "/w/" + ws.Slug + "/events"
	if page.Cursor != "" {
		v.FirstURL = withQuery(path, base)
	}
	if len(list) == eventsPageSize {
		next := url.Values{}
		for k, vs := range base {
			next[k] = vs
		}
		next.Set("cursor", list[len(list)-1].ID)
		v.NextURL = withQuery(path, next)
	}
	u.page(w, r, http.StatusOK, views.NavEvents, "Events", func(m views.PageMeta) templ.Component { return views.EventsPage(m, v) })
}

// leadSearch reads the events page's lead search: an email address, or a
// phone number in international form, normalized as ingest stores them.
func leadSearch(raw string) (email, phone, problem string) {
	switch {
	case raw == "":
		return "", "", ""
	case strings.Contains(raw, "@"):
		if e := normalize.Email(raw); e.Valid {
			return e.Value, "", ""
		}
		return "", "", "“" + raw + "” is not an email address."
	}
	if p := normalize.Phone(raw, ""); p.Valid {
		return "", p.Value, ""
	}
	return "", "", "“" + raw + "” is neither an email address nor a phone number: give a phone number with its country code, such as +44 20 7946 0958."
}

func withQuery(path string, q url.Values) string {
	if len(q) == 0 {
		return path
	}
	return path + "?" + q.Encode()
}

func eventRow(e models.Event, names map[int64]string) views.EventRow {
	row := views.EventRow{ID: e.ID, SourceName: names[e.SourceID], EventType: e.EventType, Status: e.Status, Reason: e.Reason, ReceivedAt: e.ReceivedAt}
	if row.SourceName == "" {
		row.SourceName = "source #" + strconv.FormatInt(e.SourceID, 10)
	}
	if row.EventType == "" {
		row.EventType = "(untyped)"
	}
	switch {
	case e.Email != nil:
		row.Identity = *e.Email
	case e.Phone != nil:
		row.Identity = *e.Phone
	case e.EmailRaw != nil:
		row.Identity = *e.EmailRaw
	}
	return row
}

// ShowEvent renders one event: the panel fragment for htmx, else a full page.
func (u *UI) ShowEvent(w http.ResponseWriter, r *http.Request) {
	ws := handlers.WorkspaceFrom(r)
	id := chi.URLParam(r, "id")
	if _, err := uuid.Parse(id); err != nil {
		u.NotFound(w, r)
		return
	}
	e, err := u.Store.EventGet(r.Context(), ws.ID, id)
	if errors.Is(err, models.ErrNotFound) {
		u.NotFound(w, r)
		return
	}
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	names := map[int64]string{}
	if src, err := u.Store.SourceGet(r.Context(), ws.ID, e.SourceID); err == nil {
		names[src.ID] = src.Name
	}
	v := views.EventDetailView{Workspace: wsRef(ws), Event: eventRow(e, names), OccurredAt: e.OccurredAt, Attempts: e.Attempts,
		Payload: prettyJSON(handlers.MaskFor(r, e.Payload)), Normalized: prettyJSON(handlers.MaskFor(r, e.Fields)), Attribution: prettyJSON(handlers.MaskFor(r, e.Attribution))}
	if e.ContactID != nil {
		v.ContactID = *e.ContactID
	}
	v.Fields = eventFields(e)
	if isHTMX(r) {
		u.render(w, r, http.StatusOK, views.EventDetail(v))
		return
	}
	u.page(w, r, http.StatusOK, views.NavEvents, "Event", func(m views.PageMeta) templ.Component { return views.EventDetailPage(m, v) })
}

// eventFields lists the normalized lead, with the raw value beside a problem.
func eventFields(e models.Event) []views.KV {
	var out []views.KV
	add := func(k string, v *string) {
		if v != nil && *v != "" {
			out = append(out, views.KV{Key: k, Value: *v})
		}
	}
	add("Email", e.Email)
	add("Email as sent", e.EmailRaw)
	add("Email problem", e.EmailProblem)
	add("Phone", e.Phone)
	add("Phone as sent", e.PhoneRaw)
	add("Phone problem", e.PhoneProblem)
	add("First name", e.FirstName)
	add("Last name", e.LastName)
	add("Company", e.Company)
	add("Target stage", e.TargetStage)
	if e.Channel != "" {
		out = append(out, views.KV{Key: "Channel", Value: e.Channel})
	}
	return out
}

// prettyJSON indents raw JSON; empty objects and nulls show as "".
func prettyJSON(raw json.RawMessage) string {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || bytes.Equal(t, []byte("null")) || bytes.Equal(t, []byte("{}")) {
		return ""
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, t, "", "  "); err != nil {
		return string(raw)
	}
	return buf.String()
}
