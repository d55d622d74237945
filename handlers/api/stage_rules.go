package api

import (
	"errors"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/leadgate/leadgate/actions"
	"github.com/leadgate/leadgate/handlers"
	"github.com/leadgate/leadgate/lifecycle"
	"github.com/leadgate/leadgate/lifecycle/apply"
)

// readRules decodes and validates a rule set body, answering 400 with the field at fault.
func readRules(w http.ResponseWriter, r *http.Request) (lifecycle.Rules, bool) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxAPIBody))
	if err != nil {
		handlers.WriteError(w, http.StatusRequestEntityTooLarge, "", "request body too large")
		return lifecycle.Rules{}, false
	}
	rules, err := lifecycle.ParseRules(body)
	if err != nil {
		var ve *lifecycle.ValidationError
		if errors.As(err, &ve) {
			handlers.WriteError(w, http.StatusBadRequest, ve.Field, ve.Message)
		} else {
			handlers.WriteError(w, http.StatusBadRequest, "", err.Error())
		}
		return rules, false
	}
	return rules, true
}

// GetStageRules answers the rules in force and their version (0: defaults).
func (a *API) GetStageRules(w http.ResponseWriter, r *http.Request) {
	rules, err := apply.LoadRules(r.Context(), a.Store, handlers.WorkspaceFrom(r).ID)
	if err != nil {
		handlers.ServerError(a.Log, w, r, err)
		return
	}
	handlers.WriteJSON(w, http.StatusOK, rules)
}

// stageRuleActions is the stage-rule actions over the API's store.
func (a *API) stageRuleActions() actions.StageRules { return actions.StageRules{Store: a.Store} }

// PutStageRules saves a new version: PUT .../stages (CONTRACT.md).
func (a *API) PutStageRules(w http.ResponseWriter, r *http.Request) {
	// readRules rather than decodeJSON: rules decode strictly with their defaults filled in, and its
	// errors name the rule's own JSON path.
	rules, ok := readRules(w, r)
	if !ok {
		return
	}
	saved, err := a.stageRuleActions().Save(r.Context(), handlers.WorkspaceFrom(r).ID, handlers.Actor(r), rules)
	if err != nil {
		writeActionError(a.Log, w, r, err)
		return
	}
	handlers.WriteJSON(w, http.StatusOK, saved)
}

// DryRunStageRules evaluates proposed rules against the last ?days= (default
// 7, max 90) of events without writing anything.
func (a *API) DryRunStageRules(w http.ResponseWriter, r *http.Request) {
	rules, ok := readRules(w, r)
	if !ok {
		return
	}
	days := 7
	if raw := r.URL.Query().Get("days"); raw != "" {
		n, err := strconv.Atoi(raw)
		if err != nil || n < 1 || n > 90 {
			handlers.WriteError(w, http.StatusBadRequest, "days", "days must be a whole number from 1 to 90")
			return
		}
		days = n
	}
	rep, err := apply.DryRun(r.Context(), a.Store, handlers.WorkspaceFrom(r).ID, rules, time.Now().Add(-time.Duration(days)*24*time.Hour))
	if err != nil {
		handlers.ServerError(a.Log, w, r, err)
		return
	}
	handlers.WriteJSON(w, http.StatusOK, rep)
}
