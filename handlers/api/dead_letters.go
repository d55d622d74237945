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
	"github.com/leadgate/leadgate/lifecycle/apply"
	"github.com/leadgate/leadgate/models"
)

type deadLetterJSON struct {
	ID          int64           `json:"id"`
	Kind        string          `json:"kind"`
	Reason      string          `json:"reason"`
	Status      string          `json:"status"`
	EventID     *string         `json:"event_id,omitempty"`
	ContactID   *string         `json:"contact_id,omitempty"`
	SourceID    *int64          `json:"source_id,omitempty"`
	Attempts    int             `json:"attempts"`
	NextRetryAt *time.Time      `json:"next_retry_at"`
	CreatedAt   time.Time       `json:"created_at"`
	ResolvedAt  *time.Time      `json:"resolved_at,omitempty"`
	ResolvedBy  *string         `json:"resolved_by,omitempty"`
	Resolution  *string         `json:"resolution,omitempty"`
	Payload     json.RawMessage `json:"payload,omitempty"`
	EventCount  int             `json:"event_count"`
	EventIDs    []string        `json:"event_ids"`
	LastSeenAt  time.Time       `json:"last_seen_at"`
}

func deadLetterView(d models.DeadLetter, withPayload bool) deadLetterJSON {
	v := deadLetterJSON{ID: d.ID, Kind: d.Kind, Reason: d.Reason, Status: d.Status, EventID: d.EventID, ContactID: d.ContactID,
		SourceID: d.SourceID, Attempts: d.Attempts, NextRetryAt: d.NextRetryAt, CreatedAt: d.CreatedAt, ResolvedAt: d.ResolvedAt,
		ResolvedBy: d.ResolvedBy, Resolution: d.Resolution, EventCount: d.EventCount, EventIDs: d.HeldEvents(), LastSeenAt: d.LastSeenAt}
	if v.EventIDs == nil {
		v.EventIDs = []string{}
	}
	if withPayload {
		v.Payload = models.DeadLetterPayloadForDisplay(d.Payload)
	}
	return v
}

// ListDeadLetters answers GET .../dead-letters?status=open|replayed|discarded|all&kind=&reason=&contact=&source=&older_than=.
func (a *API) ListDeadLetters(w http.ResponseWriter, r *http.Request) {
	page, ok := pageFrom(w, r)
	if !ok {
		return
	}
	f, ok := deadLetterQueryFilter(w, r)
	if !ok {
		return
	}
	if !cursorParses(w, page, intCursor) {
		return
	}
	list, err := a.Store.DeadLetterList(r.Context(), f, page)
	if err != nil {
		handlers.ServerError(a.Log, w, r, err)
		return
	}
	out := make([]deadLetterJSON, len(list))
	last := ""
	for i, d := range list {
		out[i], last = deadLetterView(d, false), strconv.FormatInt(d.ID, 10)
	}
	handlers.WriteJSON(w, http.StatusOK, map[string]any{"dead_letters": out, "next_cursor": nextCursor(len(list), page.Limit, last)})
}

// deadLetterQueryFilter reads ?status=&kind=&reason=&contact=&source=&older_than=, answering 400 itself.
func deadLetterQueryFilter(w http.ResponseWriter, r *http.Request) (models.DeadLetterFilter, bool) {
	q := r.URL.Query()
	f := models.DeadLetterFilter{WorkspaceID: handlers.WorkspaceFrom(r).ID, Status: q.Get("status"), Kind: q.Get("kind"), Reason: q.Get("reason"),
		ContactID: q.Get("contact")}
	switch f.Status {
	case "", "all", models.DeadLetterOpen, models.DeadLetterReplayed, models.DeadLetterDiscarded:
	default:
		handlers.WriteError(w, http.StatusBadRequest, "status", "status must be open, replayed, discarded or all")
		return f, false
	}
	if f.ContactID != "" {
		if _, err := uuid.Parse(f.ContactID); err != nil {
			handlers.WriteError(w, http.StatusBadRequest, "contact", "contact must be a contact id")
			return f, false
		}
	}
	if raw := q.Get("source"); raw != "" {
		id, err := strconv.ParseInt(raw, 10, 64)
		if err != nil {
			handlers.WriteError(w, http.StatusBadRequest, "source", "source must be a source id")
			return f, false
		}
		f.SourceID = id
	}
	if raw := q.Get("older_than"); raw != "" {
		d, err := time.ParseDuration(raw)
		if err != nil || d < 0 {
			handlers.WriteError(w, http.StatusBadRequest, "older_than", "older_than must be a duration such as 30m or 24h")
			return f, false
		}
		f.OlderThan = d
	}
	return f, true
}

func (a *API) deadLetterID(w http.ResponseWriter, r *http.Request) (int64, bool) {
	id, err := strconv.ParseInt(chi.URLParam(r, "id"), 10, 64)
	if err != nil {
		handlers.WriteError(w, http.StatusNotFound, "id", "unknown dead letter")
		return 0, false
	}
	return id, true
}

// GetDeadLetter answers one dead letter with its payload.
func (a *API) GetDeadLetter(w http.ResponseWriter, r *http.Request) {
	id, ok := a.deadLetterID(w, r)
	if !ok {
		return
	}
	d, err := a.Store.DeadLetterGet(r.Context(), handlers.WorkspaceFrom(r).ID, id)
	if errors.Is(err, models.ErrNotFound) {
		handlers.WriteError(w, http.StatusNotFound, "id", "unknown dead letter")
		return
	}
	if err != nil {
		handlers.ServerError(a.Log, w, r, err)
		return
	}
	v := deadLetterView(d, true)
	v.Payload = handlers.MaskFor(r, v.Payload)
	handlers.WriteJSON(w, http.StatusOK, v)
}

// ReplayDeadLetter re-applies a quarantined event: {"mode":"apply_as_is"|"apply_fields_keep_stage"|"force_stage","stage":...}.
func (a *API) ReplayDeadLetter(w http.ResponseWriter, r *http.Request) {
	id, ok := a.deadLetterID(w, r)
	if !ok {
		return
	}
	var in struct {
		Mode  apply.ReplayMode `json:"mode"`
		Stage string           `json:"stage"`
	}
	if !decodeJSON(w, r, &in) {
		return
	}
	if in.Mode == "" {
		in.Mode = apply.ReplayAsIs
	}
	if !apply.ValidReplayMode(in.Mode) {
		handlers.WriteError(w, http.StatusBadRequest, "mode", "mode must be apply_as_is, apply_fields_keep_stage or force_stage")
		return
	}
	// A CRM dead letter is replayed by sending the contact's current desired
	// state, never the stale payload; the mode does not apply to it.
	if p, err := a.Store.SyncReplayDeadLetter(r.Context(), handlers.WorkspaceFrom(r).ID, id, handlers.Actor(r)); !errors.Is(err, models.ErrNotCRMDeadLetter) {
		switch {
		case errors.Is(err, models.ErrNotFound):
			handlers.WriteError(w, http.StatusNotFound, "id", "no open dead letter with that id")
		case err != nil:
			handlers.ServerError(a.Log, w, r, err)
		default:
			handlers.WriteJSON(w, http.StatusOK, map[string]any{"status": models.DeadLetterReplayed, "mode": "resend_current_state",
				"destination_id": p.DestinationID, "contact_id": p.ContactID})
		}
		return
	}
	ev, err := a.Applier.ReplayDeadLetter(r.Context(), handlers.WorkspaceFrom(r).ID, id, in.Mode, in.Stage, handlers.Actor(r))
	var oe *apply.OperatorError
	switch {
	case errors.As(err, &oe):
		handlers.WriteError(w, http.StatusBadRequest, oe.Field, oe.Message)
	case errors.Is(err, models.ErrNotFound):
		handlers.WriteError(w, http.StatusNotFound, "id", "no open dead letter with that id")
	case err != nil && errors.As(err, new(*apply.BusyError)):
		handlers.WriteError(w, http.StatusConflict, "id", "the contact is being updated right now; try again in a moment")
	case err != nil:
		handlers.ServerError(a.Log, w, r, err)
	default:
		handlers.WriteJSON(w, http.StatusOK, map[string]any{"status": models.DeadLetterReplayed, "event": eventView(ev, false)})
	}
}

// DiscardDeadLetter closes a dead letter without applying it: {"note":...}.
func (a *API) DiscardDeadLetter(w http.ResponseWriter, r *http.Request) {
	id, ok := a.deadLetterID(w, r)
	if !ok {
		return
	}
	var in struct {
		Note string `json:"note"`
	}
	if r.ContentLength != 0 && !decodeJSON(w, r, &in) {
		return
	}
	err := a.Applier.DiscardDeadLetter(r.Context(), handlers.WorkspaceFrom(r).ID, id, in.Note, handlers.Actor(r))
	switch {
	case errors.Is(err, models.ErrNotFound):
		handlers.WriteError(w, http.StatusNotFound, "id", "no open dead letter with that id")
	case err != nil:
		handlers.ServerError(a.Log, w, r, err)
	default:
		handlers.WriteJSON(w, http.StatusOK, map[string]any{"status": models.DeadLetterDiscarded})
	}
}

// ListAudit answers the workspace's audit history, newest first.
func (a *API) ListAudit(w http.ResponseWriter, r *http.Request) {
	page, ok := pageFrom(w, r)
	if !ok {
		return
	}
	if !cursorParses(w, page, intCursor) {
		return
	}
	list, err := a.Store.AuditList(r.Context(), handlers.WorkspaceFrom(r).ID, page)
	if err != nil {
		handlers.ServerError(a.Log, w, r, err)
		return
	}
	// A caller limited to some workspaces (a scoped token, a client login) does
	// not see the instance-wide history: other clients' users and tokens.
	restricted, err := handlers.IsRestricted(r, a.Store)
	if err != nil {
		handlers.ServerError(a.Log, w, r, err)
		return
	}
	last, shown := "", list
	if len(list) > 0 {
		last = strconv.FormatInt(list[len(list)-1].ID, 10) // the cursor follows the unfiltered page
	}
	if restricted {
		shown = make([]models.AuditEntry, 0, len(list))
		for _, e := range list {
			if e.WorkspaceID != nil {
				shown = append(shown, e)
			}
		}
	}
	handlers.WriteJSON(w, http.StatusOK, map[string]any{"audit": shown, "next_cursor": nextCursor(len(list), page.Limit, last)})
}
