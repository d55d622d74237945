package handlers

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/leadgate/leadgate/guards/alert"
	"github.com/leadgate/leadgate/models"
)

type channelInput struct {
	Name        string        `json:"name"`
	Kind        string        `json:"kind"`
	MinSeverity string        `json:"min_severity"`
	Enabled     *bool         `json:"enabled"`
	Config      alert.Config  `json:"config"`
	Secrets     alert.Secrets `json:"secrets"`
}

type channelJSON struct {
	ID            int64        `json:"id"`
	Name          string       `json:"name"`
	Kind          string       `json:"kind"`
	MinSeverity   string       `json:"min_severity"`
	Enabled       bool         `json:"enabled"`
	Config        alert.Config `json:"config"`
	SecretsSet    []string     `json:"secrets_set"`
	LastTestAt    *time.Time   `json:"last_test_at"`
	LastTestError string       `json:"last_test_error"`
	CreatedAt     time.Time    `json:"created_at"`
	UpdatedAt     time.Time    `json:"updated_at"`
}

// channelView never includes a secret, only which ones are set.
func (g *GuardsAPI) channelView(c models.AlertChannel) channelJSON {
	ch, _ := alert.Open(c, g.Box)
	return channelJSON{ID: c.ID, Name: c.Name, Kind: c.Kind, MinSeverity: c.MinSeverity, Enabled: c.Enabled, Config: ch.Config,
		SecretsSet: ch.Secrets.Names(), LastTestAt: c.LastTestAt, LastTestError: c.LastTestError, CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt}
}

// validateChannel checks a channel against the workspace's SSRF guard,
// answering 400 itself.
func (g *GuardsAPI) validateChannel(w http.ResponseWriter, r *http.Request, ch alert.Channel) bool {
	if n := strings.TrimSpace(ch.Name); n == "" || len(n) > 200 {
		writeError(w, http.StatusBadRequest, "name", "name must be 1-200 characters")
		return false
	}
	guard, err := g.Guards.For(r.Context(), workspaceFrom(r).ID)
	if err != nil {
		serverError(g.Log, w, r, err)
		return false
	}
	if err := ch.Validate(guard); err != nil {
		var fe *alert.FieldError
		if errors.As(err, &fe) {
			writeError(w, http.StatusBadRequest, fe.Field, fe.Message)
		} else {
			writeError(w, http.StatusBadRequest, "", err.Error())
		}
		return false
	}
	return true
}

// ListAlertChannels answers the workspace's channels.
func (g *GuardsAPI) ListAlertChannels(w http.ResponseWriter, r *http.Request) {
	list, err := g.Store.AlertChannelList(r.Context(), workspaceFrom(r).ID, false)
	if err != nil {
		serverError(g.Log, w, r, err)
		return
	}
	out := make([]channelJSON, 0, len(list))
	for _, c := range list {
		out = append(out, g.channelView(c))
	}
	writeJSON(w, http.StatusOK, map[string]any{"channels": out})
}

// CreateAlertChannel adds a channel; secrets are sealed and never returned.
func (g *GuardsAPI) CreateAlertChannel(w http.ResponseWriter, r *http.Request) {
	var in channelInput
	if !decodeJSON(w, r, &in) {
		return
	}
	ch := alert.Channel{Kind: in.Kind, Name: strings.TrimSpace(in.Name), MinSeverity: in.MinSeverity, Config: in.Config, Secrets: in.Secrets}
	if !g.validateChannel(w, r, ch) {
		return
	}
	ws := workspaceFrom(r)
	c := models.AlertChannel{WorkspaceID: ws.ID, Enabled: in.Enabled == nil || *in.Enabled}
	if err := alert.Seal(ch, g.Box, &c); err != nil {
		serverError(g.Log, w, r, err)
		return
	}
	err := g.Store.Tx(r.Context(), func(tx *models.Store) error {
		if err := tx.AlertChannelCreate(r.Context(), &c); err != nil {
			return err
		}
		return tx.AuditRecord(r.Context(), models.Audit{WorkspaceID: ws.ID, Actor: actor(r), Action: "alert_channel.create",
			SubjectType: "alert_channel", SubjectID: strconv.FormatInt(c.ID, 10), After: g.channelView(c)})
	})
	if err != nil {
		serverError(g.Log, w, r, err)
		return
	}
	g.answerChannel(w, r, c.ID, http.StatusCreated)
}

func (g *GuardsAPI) answerChannel(w http.ResponseWriter, r *http.Request, id int64, status int) {
	c, err := g.Store.AlertChannelGet(r.Context(), workspaceFrom(r).ID, id)
	if err != nil {
		serverError(g.Log, w, r, err)
		return
	}
	writeJSON(w, status, g.channelView(c))
}

// loadChannel loads {id}, answering 404 itself.
func (g *GuardsAPI) loadChannel(w http.ResponseWriter, r *http.Request) (models.AlertChannel, bool) {
	id, err := strconv.ParseInt(chi.URLParam(r, "id"), 10, 64)
	if err != nil {
		writeError(w, http.StatusNotFound, "id", "unknown alert channel")
		return models.AlertChannel{}, false
	}
	c, err := g.Store.AlertChannelGet(r.Context(), workspaceFrom(r).ID, id)
	if errors.Is(err, models.ErrNotFound) {
		writeError(w, http.StatusNotFound, "id", "unknown alert channel")
		return c, false
	}
	if err != nil {
		serverError(g.Log, w, r, err)
		return c, false
	}
	return c, true
}

// GetAlertChannel answers one channel.
func (g *GuardsAPI) GetAlertChannel(w http.ResponseWriter, r *http.Request) {
	if c, ok := g.loadChannel(w, r); ok {
		writeJSON(w, http.StatusOK, g.channelView(c))
	}
}

// UpdateAlertChannel replaces a channel's settings; secrets left empty keep
// their current values. The kind cannot change.
func (g *GuardsAPI) UpdateAlertChannel(w http.ResponseWriter, r *http.Request) {
	c, ok := g.loadChannel(w, r)
	if !ok {
		return
	}
	var in channelInput
	if !decodeJSON(w, r, &in) {
		return
	}
	if in.Kind != "" && in.Kind != c.Kind {
		writeError(w, http.StatusBadRequest, "kind", "a channel's kind cannot change; create a new channel")
		return
	}
	cur, err := alert.Open(c, g.Box)
	if err != nil {
		serverError(g.Log, w, r, err)
		return
	}
	ch := alert.Channel{ID: c.ID, Kind: c.Kind, Name: strings.TrimSpace(in.Name), MinSeverity: in.MinSeverity, Config: in.Config,
		Secrets: cur.Secrets.Merge(in.Secrets)}
	if !g.validateChannel(w, r, ch) {
		return
	}
	before := g.channelView(c)
	if in.Enabled != nil {
		c.Enabled = *in.Enabled
	}
	if err := alert.Seal(ch, g.Box, &c); err != nil {
		serverError(g.Log, w, r, err)
		return
	}
	err = g.Store.Tx(r.Context(), func(tx *models.Store) error {
		if err := tx.AlertChannelUpdate(r.Context(), c); err != nil {
			return err
		}
		return tx.AuditRecord(r.Context(), models.Audit{WorkspaceID: c.WorkspaceID, Actor: actor(r), Action: "alert_channel.update",
			SubjectType: "alert_channel", SubjectID: strconv.FormatInt(c.ID, 10), Before: before, After: g.channelView(c)})
	})
	if err != nil {
		serverError(g.Log, w, r, err)
		return
	}
	g.answerChannel(w, r, c.ID, http.StatusOK)
}

// DeleteAlertChannel removes a channel.
func (g *GuardsAPI) DeleteAlertChannel(w http.ResponseWriter, r *http.Request) {
	c, ok := g.loadChannel(w, r)
	if !ok {
		return
	}
	err := g.Store.Tx(r.Context(), func(tx *models.Store) error {
		if err := tx.AlertChannelDelete(r.Context(), c.WorkspaceID, c.ID); err != nil {
			return err
		}
		return tx.AuditRecord(r.Context(), models.Audit{WorkspaceID: c.WorkspaceID, Actor: actor(r), Action: "alert_channel.delete",
			SubjectType: "alert_channel", SubjectID: strconv.FormatInt(c.ID, 10), Before: g.channelView(c)})
	})
	if err != nil {
		serverError(g.Log, w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// TestAlertChannel sends a test alert through the channel now (not through
// the outbox) and answers 200 {"ok":true}, or 502 with the channel's error.
func (g *GuardsAPI) TestAlertChannel(w http.ResponseWriter, r *http.Request) {
	c, ok := g.loadChannel(w, r)
	if !ok {
		return
	}
	ch, err := alert.Open(c, g.Box)
	if err != nil {
		serverError(g.Log, w, r, err)
		return
	}
	guard, err := g.Guards.For(r.Context(), c.WorkspaceID)
	if err != nil {
		serverError(g.Log, w, r, err)
		return
	}
	sender := *g.Sender
	sender.Guard = guard
	ctx, cancel := context.WithTimeout(r.Context(), 20*time.Second)
	defer cancel()
	sendErr := sender.Send(ctx, ch, alert.TestMessage(workspaceFrom(r).Slug, g.now()))
	errText := ""
	if sendErr != nil {
		errText = sendErr.Error()
	}
	if err := g.Store.AlertChannelTested(r.Context(), c.ID, errText); err != nil {
		serverError(g.Log, w, r, err)
		return
	}
	if sendErr != nil {
		writeJSON(w, http.StatusBadGateway, map[string]any{"ok": false, "error": errText})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"ok": true})
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
func (g *GuardsAPI) ListAlerts(w http.ResponseWriter, r *http.Request) {
	page, ok := pageFrom(w, r)
	if !ok {
		return
	}
	ws := workspaceFrom(r)
	rows, err := g.Store.AlertRows(r.Context(), ws.ID, page.Limit)
	if err != nil {
		serverError(g.Log, w, r, err)
		return
	}
	out := make([]alertRowJSON, 0, len(rows))
	for _, row := range rows {
		m := alert.FromOutbox(row, ws.Slug)
		out = append(out, alertRowJSON{ID: row.ID, StableID: row.StableID, Status: row.Status, Attempts: row.Attempts, LastError: row.LastError,
			Title: m.Title, Type: m.Type, Action: m.Action, Severity: m.Severity, CreatedAt: row.CreatedAt, SentAt: row.SentAt})
	}
	writeJSON(w, http.StatusOK, map[string]any{"alerts": out})
}
