package api

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/leadgate/leadgate/actions"
	"github.com/leadgate/leadgate/handlers"
	"github.com/leadgate/leadgate/ingest/filter"
	"github.com/leadgate/leadgate/models"
)

// filterSource loads {id} as a source of the workspace, answering 404 itself.
func (g *Guards) filterSource(w http.ResponseWriter, r *http.Request) (models.Source, bool) {
	id, err := strconv.ParseInt(chi.URLParam(r, "id"), 10, 64)
	if err != nil {
		handlers.WriteError(w, http.StatusNotFound, "id", "unknown source")
		return models.Source{}, false
	}
	src, err := g.Store.SourceGet(r.Context(), handlers.WorkspaceFrom(r).ID, id)
	if errors.Is(err, models.ErrNotFound) || (err == nil && src.DeletedAt != nil) {
		handlers.WriteError(w, http.StatusNotFound, "id", "unknown source")
		return src, false
	}
	if err != nil {
		handlers.ServerError(g.Log, w, r, err)
		return src, false
	}
	return src, true
}

// GetSourceFilters answers a source's rule set (empty when it has none).
func (g *Guards) GetSourceFilters(w http.ResponseWriter, r *http.Request) {
	src, ok := g.filterSource(w, r)
	if !ok {
		return
	}
	f, err := g.Store.SourceFilterGet(r.Context(), src.WorkspaceID, src.ID)
	if errors.Is(err, models.ErrNotFound) {
		handlers.WriteJSON(w, http.StatusOK, actions.FilterSet{SourceID: src.ID, Rules: []filter.Rule{}})
		return
	}
	if err != nil {
		handlers.ServerError(g.Log, w, r, err)
		return
	}
	handlers.WriteJSON(w, http.StatusOK, actions.FilterSetOf(f))
}

// PutSourceFilters replaces a source's rule set after compiling every rule.
func (g *Guards) PutSourceFilters(w http.ResponseWriter, r *http.Request) {
	src, ok := g.filterSource(w, r)
	if !ok {
		return
	}
	var in filterInput
	if !decodeJSON(w, r, &in) {
		return
	}
	saved, err := g.actions().PutSourceFilters(r.Context(), handlers.Actor(r), src, in.Rules)
	if err != nil {
		writeActionError(g.Log, w, r, err)
		return
	}
	handlers.WriteJSON(w, http.StatusOK, saved)
}

// DeleteSourceFilters removes a source's rule set: it keeps every event again.
func (g *Guards) DeleteSourceFilters(w http.ResponseWriter, r *http.Request) {
	src, ok := g.filterSource(w, r)
	if !ok {
		return
	}
	err := g.Store.Tx(r.Context(), func(tx *models.Store) error {
		cur, err := tx.SourceFilterGet(r.Context(), src.WorkspaceID, src.ID)
		if err != nil {
			return err
		}
		if _, err := tx.SourceFilterDelete(r.Context(), src.WorkspaceID, src.ID); err != nil {
			return err
		}
		return tx.AuditRecord(r.Context(), models.Audit{WorkspaceID: src.WorkspaceID, Actor: handlers.Actor(r), Action: "source_filters.delete",
			SubjectType: "source", SubjectID: strconv.FormatInt(src.ID, 10), Before: actions.FilterSetOf(cur)})
	})
	if errors.Is(err, models.ErrNotFound) {
		handlers.WriteError(w, http.StatusNotFound, "id", "this source has no filter rules")
		return
	}
	if err != nil {
		handlers.ServerError(g.Log, w, r, err)
		return
	}
	g.actions().ForgetFilters(src.ID)
	w.WriteHeader(http.StatusNoContent)
}

type filterInput struct {
	Rules []filter.Rule `json:"rules"`
}

type filterTestInput struct {
	Rules []filter.Rule `json:"rules"` // optional: test unsaved rules; default the saved ones
	Event filter.Env    `json:"event"`
}

// TestSourceFilters evaluates rules (the body's, else the saved ones) against
// a sample event without storing anything.
func (g *Guards) TestSourceFilters(w http.ResponseWriter, r *http.Request) {
	src, ok := g.filterSource(w, r)
	if !ok {
		return
	}
	var in filterTestInput
	if !decodeJSON(w, r, &in) {
		return
	}
	var set *filter.Set
	var err error
	if in.Rules != nil {
		set, err = filter.Compile(in.Rules)
		var re *filter.RuleError
		if errors.As(err, &re) {
			handlers.WriteError(w, http.StatusBadRequest, re.Field, re.Message)
			return
		}
	} else {
		loader := filter.Loader{Store: g.Store, TTL: time.Nanosecond}
		set, err = loader.ForSource(r.Context(), src.WorkspaceID, src.ID)
	}
	if err != nil {
		handlers.ServerError(g.Log, w, r, err)
		return
	}
	if in.Event.Source == "" {
		in.Event.Source, in.Event.SourceKind, in.Event.Channel = src.Name, src.Kind, src.Channel
	}
	v := filter.Evaluate(r.Context(), set, in.Event)
	if v.Tags == nil {
		v.Tags = []string{}
	}
	handlers.WriteJSON(w, http.StatusOK, map[string]any{"drop": v.Drop, "rule": v.Rule, "tags": v.Tags, "errors": v.Errors, "reason": v.Reason()})
}
