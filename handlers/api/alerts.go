package api

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/leadgate/leadgate/actions"
	"github.com/leadgate/leadgate/guards/alert"
	"github.com/leadgate/leadgate/handlers"
	"github.com/leadgate/leadgate/models"
)

// channelView never includes a secret, only which ones are set.
func (g *Guards) channelView(c models.AlertChannel) actions.ChannelView {
	return g.actions().ChannelView(c)
}

// ListAlertChannels answers the workspace's channels.
func (g *Guards) ListAlertChannels(w http.ResponseWriter, r *http.Request) {
	list, err := g.Store.AlertChannelList(r.Context(), handlers.WorkspaceFrom(r).ID, false)
	if err != nil {
		handlers.ServerError(g.Log, w, r, err)
		return
	}
	out := make([]actions.ChannelView, 0, len(list))
	for _, c := range list {
		out = append(out, g.channelView(c))
	}
	handlers.WriteJSON(w, http.StatusOK, map[string]any{"channels": out})
}

// CreateAlertChannel adds a channel; secrets are sealed and never returned.
func (g *Guards) CreateAlertChannel(w http.ResponseWriter, r *http.Request) {
	var in actions.ChannelInput
	if !decodeJSON(w, r, &in) {
		return
	}
	saved, err := g.actions().CreateAlertChannel(r.Context(), handlers.WorkspaceFrom(r), handlers.Actor(r), in)
	if err != nil {
		writeActionError(g.Log, w, r, err)
		return
	}
	handlers.WriteJSON(w, http.StatusCreated, saved)
}

// channelID reads {id}; an id that is no number names no channel.
func channelID(w http.ResponseWriter, r *http.Request) (int64, bool) {
	id, err := strconv.ParseInt(chi.URLParam(r, "id"), 10, 64)
	if err != nil {
		handlers.WriteError(w, http.StatusNotFound, "id", "unknown alert channel")
		return 0, false
	}
	return id, true
}

// loadChannel loads {id}, answering 404 itself.
func (g *Guards) loadChannel(w http.ResponseWriter, r *http.Request) (models.AlertChannel, bool) {
	id, ok := channelID(w, r)
	if !ok {
		return models.AlertChannel{}, false
	}
	c, err := g.actions().AlertChannel(r.Context(), handlers.WorkspaceFrom(r).ID, id)
	if err != nil {
		writeActionError(g.Log, w, r, err)
		return c, false
	}
	return c, true
}

// GetAlertChannel answers one channel.
func (g *Guards) GetAlertChannel(w http.ResponseWriter, r *http.Request) {
	if c, ok := g.loadChannel(w, r); ok {
		handlers.WriteJSON(w, http.StatusOK, g.channelView(c))
	}
}

// UpdateAlertChannel replaces a channel's settings; secrets left empty keep
// their current values. The kind cannot change.
func (g *Guards) UpdateAlertChannel(w http.ResponseWriter, r *http.Request) {
	c, ok := g.loadChannel(w, r)
	if !ok {
		return
	}
	var in actions.ChannelInput
	if !decodeJSON(w, r, &in) {
		return
	}
	saved, err := g.actions().UpdateAlertChannel(r.Context(), handlers.Actor(r), c, in)
	if err != nil {
		writeActionError(g.Log, w, r, err)
		return
	}
	handlers.WriteJSON(w, http.StatusOK, saved)
}

// DeleteAlertChannel removes a channel.
func (g *Guards) DeleteAlertChannel(w http.ResponseWriter, r *http.Request) {
	id, ok := channelID(w, r)
	if !ok {
		return
	}
	if err := g.actions().DeleteAlertChannel(r.Context(), handlers.WorkspaceFrom(r), handlers.Actor(r), id); err != nil {
		writeActionError(g.Log, w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// TestAlertChannel sends a test alert through the channel now (not through
// the outbox) and answers 200 {"ok":true}, or 502 with the channel's error.
func (g *Guards) TestAlertChannel(w http.ResponseWriter, r *http.Request) {
	id, ok := channelID(w, r)
	if !ok {
		return
	}
	err := g.actions().TestAlertChannel(r.Context(), handlers.WorkspaceFrom(r), id)
	var failed *actions.UpstreamError
	switch {
	case errors.As(err, &failed):
		// The test's own answer shape, not the error body: the caller asked how the send went.
		handlers.WriteJSON(w, http.StatusBadGateway, map[string]any{"ok": false, "error": failed.Message})
	case err != nil:
		writeActionError(g.Log, w, r, err)
	default:
		handlers.WriteJSON(w, http.StatusOK, map[string]any{"ok": true})
	}
}

type alertRowJSON struct {
	ID        int64      `json:"id"`
	StableID  string     `json:"stable_id"`
	Status    string     `json:"status"`
	Attempts  int        `json:"attempts"`
	LastError string     `json:"last_error"`
	Title     string     `json:"title"`
	Type      string     `json:"type"`
	Action    string     `json:"action"`
	Severity  string     `json:"severity"`
	CreatedAt time.Time  `json:"created_at"`
	SentAt    *time.Time `json:"sent_at"`
}

// ListAlerts answers the workspace's most recent alerts (?limit=, default 50)
// and how each was delivered.
func (g *Guards) ListAlerts(w http.ResponseWriter, r *http.Request) {
	page, ok := pageFrom(w, r)
	if !ok {
		return
	}
	ws := handlers.WorkspaceFrom(r)
	rows, err := g.Store.AlertRows(r.Context(), ws.ID, page.Limit)
	if err != nil {
		handlers.ServerError(g.Log, w, r, err)
		return
	}
	out := make([]alertRowJSON, 0, len(rows))
	for _, row := range rows {
		m := alert.FromOutbox(row, ws.Slug)
		out = append(out, alertRowJSON{ID: row.ID, StableID: row.StableID, Status: row.Status, Attempts: row.Attempts, LastError: row.LastError,
			Title: m.Title, Type: m.Type, Action: m.Action, Severity: m.Severity, CreatedAt: row.CreatedAt, SentAt: row.SentAt})
	}
	handlers.WriteJSON(w, http.StatusOK, map[string]any{"alerts": out})
}
