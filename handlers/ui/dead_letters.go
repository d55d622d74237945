package ui

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/a-h/templ"
	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"

	"github.com/leadgate/leadgate/handlers"
	"github.com/leadgate/leadgate/lifecycle/apply"
	"github.com/leadgate/leadgate/models"
	"github.com/leadgate/leadgate/views"
)

// deadLettersPageSize is how many dead letters one page lists.
const deadLettersPageSize = 50

// maxBulkDeadLetters caps one bulk action.
const maxBulkDeadLetters = 100

// deadLetterAges are the age filter's choices.
var deadLetterAges = []struct {
	value, label string
	age          time.Duration
}{
	{"1h", "Older than 1 hour", time.Hour},
	{"24h", "Older than 1 day", 24 * time.Hour},
	{"7d", "Older than 7 days", 7 * 24 * time.Hour},
}

// deadLetterGroupsShown caps the groups the list shows above the rows.
const deadLetterGroupsShown = 50

// ListDeadLetters renders the queue, grouped by kind, reason and contact:
// ?status=&kind=&reason=&contact=&source=&age=&cursor=.
func (u *UI) ListDeadLetters(w http.ResponseWriter, r *http.Request) {
	ws := handlers.WorkspaceFrom(r)
	q := r.URL.Query()
	v := views.DeadLettersView{Workspace: wsRef(ws), Status: q.Get("status"), Kind: q.Get("kind"), SourceID: q.Get("source"),
		Age: q.Get("age"), CanEdit: canEdit(r), Now: u.now()}
	switch v.Status {
	case models.DeadLetterReplayed, models.DeadLetterDiscarded, "all":
	default:
		v.Status = models.DeadLetterOpen
	}
	for _, s := range []string{models.DeadLetterOpen, models.DeadLetterReplayed, models.DeadLetterDiscarded, "all"} {
		v.Statuses = append(v.Statuses, views.Option{Value: s, Label: s})
	}
	f := uiDeadLetterFilter(ws.ID, q)
	f.Status = v.Status
	v.Kind, v.Reason, v.ContactID, v.Age = f.Kind, f.Reason, f.ContactID, uiDeadLetterAge(q.Get("age"))
	kinds, err := u.Store.DeadLetterKinds(r.Context(), ws.ID)
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	known := v.Kind == ""
	for _, k := range kinds {
		v.Kinds = append(v.Kinds, views.Option{Value: k, Label: strings.ReplaceAll(k, "_", " ")})
		known = known || k == v.Kind
	}
	if !known {
		// A kind no dead letter has (yet): filter by it all the same.
		v.Kinds = append(v.Kinds, views.Option{Value: v.Kind, Label: strings.ReplaceAll(v.Kind, "_", " ")})
	}
	names, err := u.sourceOptions(r, ws.ID, &v.Sources)
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	if f.SourceID == 0 {
		v.SourceID = ""
	}
	for _, a := range deadLetterAges {
		v.Ages = append(v.Ages, views.Option{Value: a.value, Label: a.label})
	}
	v.Filtered = v.Status != models.DeadLetterOpen || v.Kind != "" || v.SourceID != "" || v.Age != "" || v.Reason != "" || v.ContactID != ""
	page := models.Page{Limit: deadLettersPageSize, Cursor: q.Get("cursor")}
	if _, err := strconv.ParseInt(page.Cursor, 10, 64); err != nil {
		page.Cursor = ""
	}
	list, err := u.Store.DeadLetterList(r.Context(), f, page)
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	for _, d := range list {
		v.Rows = append(v.Rows, deadLetterRow(d, names))
	}
	path := "/w/" + ws.Slug + "/dead-letters"
	base := uiDeadLetterQuery(v.Status, v.Kind, v.Reason, v.ContactID, v.SourceID, v.Age)
	if err := u.deadLetterGroups(r, f, path, v.SourceID, v.Age, &v); err != nil {
		u.serverError(w, r, err)
		return
	}
	if page.Cursor != "" {
		v.FirstURL = withQuery(path, base)
	}
	if len(list) == deadLettersPageSize {
		base.Set("cursor", strconv.FormatInt(list[len(list)-1].ID, 10))
		v.NextURL = withQuery(path, base)
	}
	u.page(w, r, http.StatusOK, views.NavDeadLetter, "Dead letters", func(m views.PageMeta) templ.Component { return views.DeadLettersPage(m, v) })
}

// deadLetterGroups fills the groups of the current filter and, for open
// dead letters, what "act on all matching" would act on.
func (u *UI) deadLetterGroups(r *http.Request, f models.DeadLetterFilter, path, source, age string, v *views.DeadLettersView) error {
	groups, err := u.Store.DeadLetterGroups(r.Context(), f, deadLetterGroupsShown)
	if err != nil {
		return err
	}
	for _, g := range groups {
		row := views.DeadLetterGroupRow{Kind: g.Kind, Reason: g.Reason, ContactID: deref(g.ContactID), DeadLetters: g.DeadLetters, Events: g.Events,
			FirstSeen: g.FirstSeen, LastSeen: g.LastSeen, IsLoop: g.Kind == models.KindLoopSuspected && g.ContactID != nil}
		row.URL = withQuery(path, uiDeadLetterQuery(v.Status, g.Kind, g.Reason, row.ContactID, source, age))
		v.Groups = append(v.Groups, row)
	}
	if v.Status != models.DeadLetterOpen {
		return nil
	}
	if v.Matching, err = u.Store.DeadLetterCount(r.Context(), f); err != nil {
		return err
	}
	if v.Matching > 0 && v.CanEdit {
		rules, err := apply.LoadRules(r.Context(), u.Store, f.WorkspaceID)
		if err != nil {
			return err
		}
		v.Stages = stageOptions(rules)
	}
	return nil
}

// uiDeadLetterFilter reads the list's filters (kind, reason, contact,
// source, age); values that cannot be filters are ignored.
func uiDeadLetterFilter(wsID int64, q url.Values) models.DeadLetterFilter {
	f := models.DeadLetterFilter{WorkspaceID: wsID, Kind: q.Get("kind"), Reason: q.Get("reason"), ContactID: q.Get("contact")}
	if len(f.Kind) > 64 {
		f.Kind = ""
	}
	if len(f.Reason) > 2000 {
		f.Reason = ""
	}
	if _, err := uuid.Parse(f.ContactID); err != nil {
		f.ContactID = ""
	}
	if id, err := strconv.ParseInt(q.Get("source"), 10, 64); err == nil {
		f.SourceID = id
	}
	for _, a := range deadLetterAges {
		if a.value == q.Get("age") {
			f.OlderThan = a.age
		}
	}
	return f
}

// uiDeadLetterAge is age when it is one of the age filter's choices, else "".
func uiDeadLetterAge(age string) string {
	for _, a := range deadLetterAges {
		if a.value == age {
			return age
		}
	}
	return ""
}

// uiDeadLetterQuery is the list's query string for a filter.
func uiDeadLetterQuery(status, kind, reason, contact, source, age string) url.Values {
	base := url.Values{}
	for k, val := range map[string]string{"status": status, "kind": kind, "reason": reason, "contact": contact, "source": source, "age": age} {
		if val != "" && !(k == "status" && val == models.DeadLetterOpen) {
			base.Set(k, val)
		}
	}
	return base
}

// ActOnAllDeadLetters replays (with the chosen mode) or discards every open
// dead letter the list's filter selects, server-side, through the same
// action as the API; one audit entry records the filter and the count. A
// loop group's "reset the breaker, then replay" resets its contact's breaker first.
func (u *UI) ActOnAllDeadLetters(w http.ResponseWriter, r *http.Request) {
	ws := handlers.WorkspaceFrom(r)
	if err := r.ParseForm(); err != nil {
		u.flashRedirect(w, r, "/w/"+ws.Slug+"/dead-letters", "error", "The form could not be read.")
		return
	}
	f := uiDeadLetterFilter(ws.ID, r.PostForm)
	source := ""
	if f.SourceID != 0 {
		source = strconv.FormatInt(f.SourceID, 10)
	}
	back := withQuery("/w/"+ws.Slug+"/dead-letters", uiDeadLetterQuery("", f.Kind, f.Reason, f.ContactID, source, uiDeadLetterAge(r.PostFormValue("age"))))
	b := apply.BulkDeadLetters{Filter: f, Action: r.PostFormValue("action"), Mode: apply.ReplayMode(r.PostFormValue("mode")),
		Stage: r.PostFormValue("stage"), Note: strings.TrimSpace(r.PostFormValue("note")), ResetBreaker: r.PostFormValue("reset_breaker") != ""}
	if b.Mode == "" {
		b.Mode = apply.ReplayAsIs
	}
	if b.Action == apply.BulkDiscard && b.Note == "" {
		b.Note = "discarded with all matching"
	}
	res, err := u.Applier.ActOnDeadLetters(r.Context(), b, handlers.Actor(r))
	var oe *apply.OperatorError
	switch {
	case errors.As(err, &oe):
		u.flashRedirect(w, r, back, "error", capitalize(oe.Message)+".")
		return
	case err != nil:
		u.serverError(w, r, err)
		return
	}
	verb := map[string]string{apply.BulkReplay: "Replayed", apply.BulkDiscard: "Discarded"}[b.Action]
	msg := fmt.Sprintf("%s %d of %d matching dead letter(s), holding %d event(s).", verb, res.Done, res.Matched, res.Events)
	if res.BreakerReset {
		msg = "Circuit breaker reset. " + msg
	}
	kind := "ok"
	if len(res.Failed) > 0 {
		msg += " Not done: " + apply.BulkFailureText(res.Failed, 5)
		kind = "error"
	}
	u.flashRedirect(w, r, back, kind, msg)
}

// sourceOptions fills opts with the workspace's sources and returns their names by id.
func (u *UI) sourceOptions(r *http.Request, wsID int64, opts *[]views.Option) (map[int64]string, error) {
	sources, err := u.Store.SourceList(r.Context(), wsID)
	if err != nil {
		return nil, err
	}
	names := map[int64]string{}
	for _, s := range sources {
		names[s.ID] = s.Name
		*opts = append(*opts, views.Option{Value: strconv.FormatInt(s.ID, 10), Label: s.Name})
	}
	return names, nil
}

func deadLetterRow(d models.DeadLetter, names map[int64]string) views.DeadLetterRow {
	row := views.DeadLetterRow{ID: d.ID, Kind: d.Kind, Reason: d.Reason, Status: d.Status, Attempts: d.Attempts, CreatedAt: d.CreatedAt,
		IsEvent: d.EventID != nil, SourceName: "CRM sync", Events: max(d.EventCount, 1), LastSeen: d.LastSeenAt}
	if d.SourceID != nil {
		row.SourceName = names[*d.SourceID]
		if row.SourceName == "" {
			row.SourceName = "source #" + strconv.FormatInt(*d.SourceID, 10)
		}
	}
	return row
}

// loadDeadLetter reads {id} of the current workspace, answering 404 itself.
func (u *UI) loadDeadLetter(w http.ResponseWriter, r *http.Request) (models.DeadLetter, bool) {
	id, err := strconv.ParseInt(chi.URLParam(r, "id"), 10, 64)
	if err != nil {
		u.NotFound(w, r)
		return models.DeadLetter{}, false
	}
	d, err := u.Store.DeadLetterGet(r.Context(), handlers.WorkspaceFrom(r).ID, id)
	if errors.Is(err, models.ErrNotFound) {
		u.NotFound(w, r)
		return d, false
	}
	if err != nil {
		u.serverError(w, r, err)
		return d, false
	}
	return d, true
}

// ShowDeadLetter renders one dead letter with its payload and the replay choice.
func (u *UI) ShowDeadLetter(w http.ResponseWriter, r *http.Request) {
	d, ok := u.loadDeadLetter(w, r)
	if !ok {
		return
	}
	u.deadLetterPage(w, r, http.StatusOK, d, views.ReplayForm{})
}

func (u *UI) deadLetterPage(w http.ResponseWriter, r *http.Request, status int, d models.DeadLetter, form views.ReplayForm) {
	ws := handlers.WorkspaceFrom(r)
	var opts []views.Option
	names, err := u.sourceOptions(r, ws.ID, &opts)
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	rules, err := apply.LoadRules(r.Context(), u.Store, ws.ID)
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	v := views.DeadLetterDetailView{Workspace: wsRef(ws), Row: deadLetterRow(d, names), EventID: deref(d.EventID), ContactID: deref(d.ContactID),
		Payload: prettyJSON(handlers.MaskFor(r, models.DeadLetterPayloadForDisplay(d.Payload))), HeldEvents: d.HeldEvents(), NextRetry: d.NextRetryAt, ResolvedAt: d.ResolvedAt, ResolvedBy: deref(d.ResolvedBy),
		Resolution: deref(d.Resolution), Stages: stageOptions(rules), Form: form, CanEdit: canEdit(r), Now: u.now()}
	if v.ContactID == "" && d.EventID != nil {
		// A quarantined event names its contact even when the dead letter does not.
		v.ContactID = u.eventContact(r, ws.ID, *d.EventID)
	}
	title := "Dead letter #" + strconv.FormatInt(d.ID, 10)
	u.page(w, r, status, views.NavDeadLetter, title, func(m views.PageMeta) templ.Component { return views.DeadLetterPage(m, v) })
}

// ReplayDeadLetterUI replays with the operator's choice: as is, fields only
// keeping the stage, or forcing a stage.
func (u *UI) ReplayDeadLetterUI(w http.ResponseWriter, r *http.Request) {
	d, ok := u.loadDeadLetter(w, r)
	if !ok {
		return
	}
	form := views.ReplayForm{Mode: r.PostFormValue("mode"), Stage: r.PostFormValue("stage")}
	if form.Mode == "" {
		form.Mode = string(apply.ReplayAsIs)
	}
	fail := func(field, msg string) {
		form.Errors = views.FieldErrors{field: msg}
		u.deadLetterPage(w, r, http.StatusUnprocessableEntity, d, form)
	}
	switch {
	case !apply.ValidReplayMode(apply.ReplayMode(form.Mode)):
		fail("form", "Choose how to replay: as is, fields only, or force a stage.")
		return
	case form.Mode == string(apply.ReplayForceStage) && form.Stage == "":
		fail("stage", "Pick the stage to force.")
		return
	}
	msg, err := u.replay(r.Context(), r, d, apply.ReplayMode(form.Mode), form.Stage)
	var oe *apply.OperatorError
	switch {
	case errors.As(err, &oe):
		field := "form"
		if oe.Field == "stage" {
			field = "stage"
		}
		fail(field, oe.Message)
	case errors.Is(err, models.ErrNotFound):
		u.flashRedirect(w, r, deadLetterPath(r, d.ID), "error", "This dead letter was already resolved.")
	case err != nil:
		u.serverError(w, r, err)
	default:
		u.flashRedirect(w, r, deadLetterPath(r, d.ID), "ok", msg)
	}
}

// replay re-applies an event dead letter through the applier, or asks the
// CRM sync to resend a contact's current state; both audit in their
// transaction. It returns what happened, for the flash message.
func (u *UI) replay(ctx context.Context, r *http.Request, d models.DeadLetter, mode apply.ReplayMode, stage string) (string, error) {
	if d.EventID == nil {
		_, err := u.Store.SyncReplayDeadLetter(ctx, d.WorkspaceID, d.ID, handlers.Actor(r))
		if errors.Is(err, models.ErrNotCRMDeadLetter) {
			return "", &apply.OperatorError{Field: "id", Message: "This dead letter has nothing to replay; discard it once handled."}
		}
		if err != nil {
			return "", err
		}
		return "Queued: the contact's current state will be sent to the CRM again.", nil
	}
	ev, err := u.Applier.ReplayDeadLetter(ctx, d.WorkspaceID, d.ID, mode, stage, handlers.Actor(r))
	if errors.As(err, new(*apply.BusyError)) {
		return "", &apply.OperatorError{Field: "id", Message: "The contact is being updated right now; try again in a moment."}
	}
	if err != nil {
		return "", err
	}
	msg := "Replayed: the event is now " + ev.Status
	if ev.Reason != "" {
		msg += " (" + ev.Reason + ")"
	}
	return msg + ".", nil
}

// DiscardDeadLetterUI closes a dead letter without applying it.
func (u *UI) DiscardDeadLetterUI(w http.ResponseWriter, r *http.Request) {
	d, ok := u.loadDeadLetter(w, r)
	if !ok {
		return
	}
	note := strings.TrimSpace(r.PostFormValue("note"))
	err := u.Applier.DiscardDeadLetter(r.Context(), d.WorkspaceID, d.ID, note, handlers.Actor(r))
	switch {
	case errors.Is(err, models.ErrNotFound):
		u.flashRedirect(w, r, deadLetterPath(r, d.ID), "error", "This dead letter was already resolved.")
	case err != nil:
		u.serverError(w, r, err)
	default:
		u.flashRedirect(w, r, "/w/"+handlers.WorkspaceFrom(r).Slug+"/dead-letters", "ok", fmt.Sprintf("Dead letter #%d discarded.", d.ID))
	}
}

// BulkDeadLetters replays as-is or discards the selected dead letters, each
// in its own audited transaction, and reports how many succeeded.
func (u *UI) BulkDeadLetters(w http.ResponseWriter, r *http.Request) {
	ws := handlers.WorkspaceFrom(r)
	back := "/w/" + ws.Slug + "/dead-letters"
	if err := r.ParseForm(); err != nil {
		u.flashRedirect(w, r, back, "error", "The selection could not be read.")
		return
	}
	action := r.PostFormValue("action")
	ids := r.PostForm["id"]
	if action != "replay" && action != "discard" {
		u.flashRedirect(w, r, back, "error", "Choose replay or discard.")
		return
	}
	if len(ids) == 0 {
		u.flashRedirect(w, r, back, "error", "Select at least one dead letter first.")
		return
	}
	if len(ids) > maxBulkDeadLetters {
		u.flashRedirect(w, r, back, "error", fmt.Sprintf("Select at most %d dead letters at a time.", maxBulkDeadLetters))
		return
	}
	done, failed := 0, []string{}
	for _, raw := range ids {
		id, err := strconv.ParseInt(raw, 10, 64)
		if err != nil {
			failed = append(failed, "#"+raw+": not a dead letter")
			continue
		}
		if err := u.bulkOne(r, ws.ID, id, action); err != nil {
			var oe *apply.OperatorError
			switch {
			case errors.As(err, &oe):
				failed = append(failed, fmt.Sprintf("#%d: %s", id, oe.Message))
			case errors.Is(err, models.ErrNotFound):
				failed = append(failed, fmt.Sprintf("#%d: already resolved", id))
			default:
				u.Log.Error("bulk dead letter", "id", id, "action", action, "err", err)
				failed = append(failed, fmt.Sprintf("#%d: failed, see the logs", id))
			}
			continue
		}
		done++
	}
	verb := map[string]string{"replay": "Replayed", "discard": "Discarded"}[action]
	msg := fmt.Sprintf("%s %d dead letter(s).", verb, done)
	kind := "ok"
	if len(failed) > 0 {
		msg += " Not done: " + strings.Join(failed, "; ")
		kind = "error"
	}
	u.flashRedirect(w, r, back, kind, msg)
}

func (u *UI) bulkOne(r *http.Request, wsID, id int64, action string) error {
	if action == "discard" {
		return u.Applier.DiscardDeadLetter(r.Context(), wsID, id, "bulk discard", handlers.Actor(r))
	}
	d, err := u.Store.DeadLetterGet(r.Context(), wsID, id)
	if err != nil {
		return err
	}
	_, err = u.replay(r.Context(), r, d, apply.ReplayAsIs, "")
	return err
}

func deadLetterPath(r *http.Request, id int64) string {
	return "/w/" + handlers.WorkspaceFrom(r).Slug + "/dead-letters/" + strconv.FormatInt(id, 10)
}

// eventContact finds the contact an event concerns: the one it was applied
// to, else the live contact with its email or phone ("" when none).
func (u *UI) eventContact(r *http.Request, wsID int64, eventID string) string {
	ev, err := u.Store.EventGet(r.Context(), wsID, eventID)
	if err != nil {
		return ""
	}
	if ev.ContactID != nil {
		return *ev.ContactID
	}
	var c models.Contact
	switch {
	case ev.Email != nil:
		c, err = u.Store.ContactFindByEmail(r.Context(), wsID, *ev.Email)
	case ev.Phone != nil:
		c, err = u.Store.ContactFindByPhone(r.Context(), wsID, *ev.Phone)
	default:
		return ""
	}
	if err != nil {
		return ""
	}
	return c.ID
}
