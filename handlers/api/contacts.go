package api

import (
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"

	"github.com/leadgate/leadgate/handlers"
	"github.com/leadgate/leadgate/ingest/normalize"
	"github.com/leadgate/leadgate/lifecycle/apply"
	"github.com/leadgate/leadgate/models"
)

// contactJSON is a contact as the API shows it.
type contactJSON struct {
	ID              string            `json:"id"`
	Email           *string           `json:"email"`
	Phone           *string           `json:"phone"`
	Stage           string            `json:"stage"`
	StageEnteredAt  *time.Time        `json:"stage_entered_at,omitempty"`
	FirstName       *string           `json:"first_name,omitempty"`
	LastName        *string           `json:"last_name,omitempty"`
	Company         *string           `json:"company,omitempty"`
	PhoneVerified   bool              `json:"phone_verified"`
	Fields          map[string]string `json:"fields,omitempty"`
	FirstTouch      map[string]string `json:"first_touch,omitempty"`
	Tags            []string          `json:"tags"`
	Score           int               `json:"score"`
	ScoreBreakdown  json.RawMessage   `json:"score_breakdown,omitempty"`
	SubmissionCount int               `json:"submission_count"`
	FirstSeenAt     time.Time         `json:"first_seen_at"`
	LastActivityAt  time.Time         `json:"last_activity_at"`
	Version         int64             `json:"version"`
	MergedInto      *string           `json:"merged_into,omitempty"`
}

func contactView(c models.Contact) contactJSON {
	tags := c.Tags
	if tags == nil {
		tags = []string{}
	}
	return contactJSON{ID: c.ID, Email: c.Email, Phone: c.Phone, Stage: c.Stage, StageEnteredAt: c.StageEnteredAt, FirstName: c.FirstName,
		LastName: c.LastName, Company: c.Company, PhoneVerified: c.PhoneVerified, Fields: c.Fields, FirstTouch: c.FirstTouch, Tags: tags,
		Score: c.Score, ScoreBreakdown: c.ScoreBreakdown, SubmissionCount: c.SubmissionCount, FirstSeenAt: c.FirstSeenAt,
		LastActivityAt: c.LastActivityAt, Version: c.Version, MergedInto: c.MergedInto}
}

// ListContacts answers GET .../contacts?email=&phone=&stage=&q=; email and
// phone are normalized first, so any surface form finds the contact.
func (a *API) ListContacts(w http.ResponseWriter, r *http.Request) {
	page, ok := pageFrom(w, r)
	if !ok {
		return
	}
	q := r.URL.Query()
	f := models.ContactFilter{WorkspaceID: handlers.WorkspaceFrom(r).ID, Stage: q.Get("stage"), Query: q.Get("q")}
	if raw := q.Get("email"); raw != "" {
		e := normalize.Email(raw)
		if !e.Valid {
			handlers.WriteError(w, http.StatusBadRequest, "email", "invalid email: "+e.Problem)
			return
		}
		f.Email = e.Value
	}
	if raw := q.Get("phone"); raw != "" {
		p := normalize.Phone(raw, q.Get("region"))
		if !p.Valid {
			handlers.WriteError(w, http.StatusBadRequest, "phone", "invalid phone: "+p.Problem)
			return
		}
		f.Phone = p.Value
	}
	if !cursorParses(w, page, uuidCursor) {
		return
	}
	list, err := a.Store.ContactList(r.Context(), f, page)
	if err != nil {
		handlers.ServerError(a.Log, w, r, err)
		return
	}
	out := make([]contactJSON, len(list))
	last := ""
	for i, c := range list {
		out[i], last = contactView(c), c.ID
	}
	handlers.WriteJSON(w, http.StatusOK, map[string]any{"contacts": out, "next_cursor": nextCursor(len(list), page.Limit, last)})
}

// loadContact reads {id}, answering 404 itself.
func (a *API) loadContact(w http.ResponseWriter, r *http.Request) (models.Contact, bool) {
	id := chi.URLParam(r, "id")
	if _, err := uuid.Parse(id); err != nil {
		handlers.WriteError(w, http.StatusNotFound, "id", "unknown contact")
		return models.Contact{}, false
	}
	c, err := a.Store.ContactGet(r.Context(), handlers.WorkspaceFrom(r).ID, id)
	if errors.Is(err, models.ErrNotFound) {
		handlers.WriteError(w, http.StatusNotFound, "id", "unknown contact")
		return c, false
	}
	if err != nil {
		handlers.ServerError(a.Log, w, r, err)
		return c, false
	}
	return c, true
}

// GetContact answers a contact with its timeline: events (with decisions and
// reasons), stage history, observations and CRM intents.
func (a *API) GetContact(w http.ResponseWriter, r *http.Request) {
	c, ok := a.loadContact(w, r)
	if !ok {
		return
	}
	ctx := r.Context()
	events, err := a.Store.EventList(ctx, models.EventFilter{WorkspaceID: c.WorkspaceID, ContactID: c.ID}, models.Page{Limit: 500})
	if err != nil {
		handlers.ServerError(a.Log, w, r, err)
		return
	}
	history, err := a.Store.StageHistoryForContact(ctx, c.ID)
	if err != nil {
		handlers.ServerError(a.Log, w, r, err)
		return
	}
	obs, err := a.Store.ObservationsForContact(ctx, c.ID)
	if err != nil {
		handlers.ServerError(a.Log, w, r, err)
		return
	}
	outbox, err := a.Store.OutboxForContact(ctx, c.ID, 200)
	if err != nil {
		handlers.ServerError(a.Log, w, r, err)
		return
	}
	ev := make([]eventJSON, len(events))
	for i, e := range events {
		ev[i] = eventView(e, false)
	}
	handlers.WriteJSON(w, http.StatusOK, map[string]any{"contact": contactView(c), "events": ev, "stage_history": history, "observations": obs, "outbox": outbox})
}

// operatorDone answers an operator action's result or its error.
func (a *API) operatorDone(w http.ResponseWriter, r *http.Request, c models.Contact, err error) {
	var oe *apply.OperatorError
	switch {
	case errors.As(err, &oe) && oe.Conflict:
		handlers.WriteError(w, http.StatusConflict, oe.Field, oe.Message)
	case errors.As(err, &oe):
		handlers.WriteError(w, http.StatusBadRequest, oe.Field, oe.Message)
	case errors.Is(err, models.ErrNotFound):
		handlers.WriteError(w, http.StatusNotFound, "id", "not found")
	case err != nil:
		handlers.ServerError(a.Log, w, r, err)
	default:
		handlers.WriteJSON(w, http.StatusOK, map[string]any{"contact": contactView(c)})
	}
}

// CorrectContactField records a human correction: POST .../contacts/{id}/corrections {"field","value"}.
func (a *API) CorrectContactField(w http.ResponseWriter, r *http.Request) {
	c, ok := a.loadContact(w, r)
	if !ok {
		return
	}
	var in struct {
		Field string `json:"field"`
		Value string `json:"value"`
	}
	if !decodeJSON(w, r, &in) {
		return
	}
	out, err := a.Applier.CorrectField(r.Context(), c.WorkspaceID, c.ID, in.Field, in.Value, handlers.Actor(r))
	a.operatorDone(w, r, out, err)
}

// SetContactStage changes a stage by hand: POST .../contacts/{id}/stage {"stage","reason"}.
func (a *API) SetContactStage(w http.ResponseWriter, r *http.Request) {
	c, ok := a.loadContact(w, r)
	if !ok {
		return
	}
	var in struct {
		Stage  string `json:"stage"`
		Reason string `json:"reason"`
	}
	if !decodeJSON(w, r, &in) {
		return
	}
	out, err := a.Applier.SetStage(r.Context(), c.WorkspaceID, c.ID, in.Stage, in.Reason, handlers.Actor(r))
	a.operatorDone(w, r, out, err)
}

// MergeContact folds another contact into this one: POST .../contacts/{id}/merge {"merge_id"}.
func (a *API) MergeContact(w http.ResponseWriter, r *http.Request) {
	c, ok := a.loadContact(w, r)
	if !ok {
		return
	}
	var in struct {
		MergeID string `json:"merge_id"`
	}
	if !decodeJSON(w, r, &in) {
		return
	}
	if _, err := uuid.Parse(in.MergeID); err != nil {
		handlers.WriteError(w, http.StatusBadRequest, "merge_id", "merge_id must be a contact id")
		return
	}
	out, err := a.Applier.MergeContacts(r.Context(), c.WorkspaceID, c.ID, in.MergeID, handlers.Actor(r))
	a.operatorDone(w, r, out, err)
}
