package api

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"

	"github.com/leadgate/leadgate/handlers"
	"github.com/leadgate/leadgate/models"
)

// eventJSON is an inbox event as the API shows it.
type eventJSON struct {
	ID           string          `json:"id"`
	SourceID     int64           `json:"source_id"`
	Status       string          `json:"status"`
	Reason       string          `json:"reason,omitempty"`
	EventType    string          `json:"event_type"`
	Channel      string          `json:"channel,omitempty"`
	OccurredAt   time.Time       `json:"occurred_at"`
	ReceivedAt   time.Time       `json:"received_at"`
	Email        *string         `json:"email"`
	EmailRaw     *string         `json:"email_raw,omitempty"`
	EmailProblem *string         `json:"email_problem,omitempty"`
	Phone        *string         `json:"phone"`
	PhoneRaw     *string         `json:"phone_raw,omitempty"`
	PhoneProblem *string         `json:"phone_problem,omitempty"`
	FirstName    *string         `json:"first_name,omitempty"`
	LastName     *string         `json:"last_name,omitempty"`
	Company      *string         `json:"company,omitempty"`
	TargetStage  *string         `json:"target_stage,omitempty"`
	ContactID    *string         `json:"contact_id,omitempty"`
	Attempts     int             `json:"attempts"`
	Spooled      bool            `json:"spooled,omitempty"`
	Fields       json.RawMessage `json:"fields,omitempty"`
	Attribution  json.RawMessage `json:"attribution,omitempty"`
	Hydration    json.RawMessage `json:"hydration,omitempty"`
	Payload      json.RawMessage `json:"payload,omitempty"`
}

func eventView(e models.Event, withPayload bool) eventJSON {
	v := eventJSON{ID: e.ID, SourceID: e.SourceID, Status: e.Status, Reason: e.Reason, EventType: e.EventType, Channel: e.Channel,
		OccurredAt: e.OccurredAt, ReceivedAt: e.ReceivedAt, Email: e.Email, EmailRaw: e.EmailRaw, EmailProblem: e.EmailProblem,
		Phone: e.Phone, PhoneRaw: e.PhoneRaw, PhoneProblem: e.PhoneProblem, FirstName: e.FirstName, LastName: e.LastName,
		Company: e.Company, TargetStage: e.TargetStage, ContactID: e.ContactID, Attempts: e.Attempts, Spooled: e.Spooled}
	if withPayload {
		v.Fields, v.Attribution, v.Hydration, v.Payload = e.Fields, e.Attribution, e.Hydration, e.Payload
	}
	return v
}

// ListEvents answers GET .../events?status=&source=&limit=&cursor=.
func (a *API) ListEvents(w http.ResponseWriter, r *http.Request) {
	page, ok := pageFrom(w, r)
	if !ok {
		return
	}
	q := r.URL.Query()
	f := models.EventFilter{WorkspaceID: handlers.WorkspaceFrom(r).ID, Status: q.Get("status"), Email: q.Get("email")}
	if f.Status != "" && !handlers.IsEventStatus(f.Status) {
		handlers.WriteError(w, http.StatusBadRequest, "status", "unknown status "+strconv.Quote(f.Status))
		return
	}
	if raw := q.Get("source"); raw != "" {
		id, err := strconv.ParseInt(raw, 10, 64)
		if err != nil {
			handlers.WriteError(w, http.StatusBadRequest, "source", "source must be a source id")
			return
		}
		f.SourceID = id
	}
	if !cursorParses(w, page, uuidCursor) {
		return
	}
	list, err := a.Store.EventList(r.Context(), f, page)
	if err != nil {
		handlers.ServerError(a.Log, w, r, err)
		return
	}
	out := make([]eventJSON, len(list))
	last := ""
	for i, e := range list {
		out[i], last = eventView(e, false), e.ID
	}
	handlers.WriteJSON(w, http.StatusOK, map[string]any{"events": out, "next_cursor": nextCursor(len(list), page.Limit, last)})
}

// GetEvent answers one event with its payload.
func (a *API) GetEvent(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "id")
	if _, err := uuid.Parse(id); err != nil {
		handlers.WriteError(w, http.StatusNotFound, "id", "unknown event")
		return
	}
	e, err := a.Store.EventGet(r.Context(), handlers.WorkspaceFrom(r).ID, id)
	if errors.Is(err, models.ErrNotFound) {
		// An id acknowledged from the spool may stand for an event stored under another id.
		if orig, aerr := a.Store.EventResolveAlias(r.Context(), handlers.WorkspaceFrom(r).ID, id); aerr == nil {
			e, err = a.Store.EventGet(r.Context(), handlers.WorkspaceFrom(r).ID, orig)
		}
	}
	if errors.Is(err, models.ErrNotFound) {
		handlers.WriteError(w, http.StatusNotFound, "id", "unknown event")
		return
	}
	if err != nil {
		handlers.ServerError(a.Log, w, r, err)
		return
	}
	v := eventView(e, true)
	v.Payload, v.Fields, v.Attribution = handlers.MaskFor(r, v.Payload), handlers.MaskFor(r, v.Fields), handlers.MaskFor(r, v.Attribution)
	handlers.WriteJSON(w, http.StatusOK, v)
}

// GetStats answers CONTRACT.md's counters.
func (a *API) GetStats(w http.ResponseWriter, r *http.Request) {
	st, err := a.Store.StatsGet(r.Context(), handlers.WorkspaceFrom(r).ID)
	if err != nil {
		handlers.ServerError(a.Log, w, r, err)
		return
	}
	handlers.WriteJSON(w, http.StatusOK, st)
}
