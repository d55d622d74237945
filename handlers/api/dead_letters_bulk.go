package api

import (
	"errors"
	"net/http"
	"time"

	"github.com/google/uuid"

	"github.com/leadgate/leadgate/handlers"
	"github.com/leadgate/leadgate/lifecycle/apply"
	"github.com/leadgate/leadgate/models"
)

// deadLetterGroupsLimit caps the groups one answer lists.
const deadLetterGroupsLimit = 200

// ListDeadLetterGroups answers GET .../dead-letters/groups (the list's filters):
// the dead letters grouped by kind, reason and contact, with counts and first and last seen.
func (a *API) ListDeadLetterGroups(w http.ResponseWriter, r *http.Request) {
	f, ok := deadLetterQueryFilter(w, r)
	if !ok {
		return
	}
	groups, err := a.Store.DeadLetterGroups(r.Context(), f, deadLetterGroupsLimit)
	if err != nil {
		handlers.ServerError(a.Log, w, r, err)
		return
	}
	if groups == nil {
		groups = []models.DeadLetterGroup{}
	}
	handlers.WriteJSON(w, http.StatusOK, map[string]any{"groups": groups})
}

// ActOnDeadLetters answers POST .../dead-letters/act-on-all: replay (one mode
// for all) or discard every open dead letter the filter selects, with one
// audit entry. Body: {"filter":{"kind","reason","contact_id","source_id","older_than"},
// "action":"replay"|"discard","mode","stage","note","reset_breaker"}.
func (a *API) ActOnDeadLetters(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Filter struct {
			Kind      string `json:"kind"`
			Reason    string `json:"reason"`
			ContactID string `json:"contact_id"`
			SourceID  int64  `json:"source_id"`
			OlderThan string `json:"older_than"`
		} `json:"filter"`
		Action       string           `json:"action"`
		Mode         apply.ReplayMode `json:"mode"`
		Stage        string           `json:"stage"`
		Note         string           `json:"note"`
		ResetBreaker bool             `json:"reset_breaker"`
	}
	if !decodeJSON(w, r, &in) {
		return
	}
	f := models.DeadLetterFilter{WorkspaceID: handlers.WorkspaceFrom(r).ID, Kind: in.Filter.Kind, Reason: in.Filter.Reason,
		ContactID: in.Filter.ContactID, SourceID: in.Filter.SourceID}
	if f.ContactID != "" {
		if _, err := uuid.Parse(f.ContactID); err != nil {
			handlers.WriteError(w, http.StatusBadRequest, "filter.contact_id", "contact_id must be a contact id")
			return
		}
	}
	if in.Filter.OlderThan != "" {
		d, err := time.ParseDuration(in.Filter.OlderThan)
		if err != nil || d < 0 {
			handlers.WriteError(w, http.StatusBadRequest, "filter.older_than", "older_than must be a duration such as 30m or 24h")
			return
		}
		f.OlderThan = d
	}
	if in.Action == apply.BulkReplay && in.Mode == "" {
		in.Mode = apply.ReplayAsIs
	}
	res, err := a.Applier.ActOnDeadLetters(r.Context(), apply.BulkDeadLetters{Filter: f, Action: in.Action, Mode: in.Mode, Stage: in.Stage,
		Note: in.Note, ResetBreaker: in.ResetBreaker}, handlers.Actor(r))
	var oe *apply.OperatorError
	switch {
	case errors.As(err, &oe):
		handlers.WriteError(w, http.StatusBadRequest, oe.Field, oe.Message)
	case err != nil:
		handlers.ServerError(a.Log, w, r, err)
	default:
		handlers.WriteJSON(w, http.StatusOK, res)
	}
}
