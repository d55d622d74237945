package handlers

import (
	"errors"
	"log/slog"
	"net/http"
	"net/netip"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"

	"github.com/leadgate/leadgate/guards/alarm"
	"github.com/leadgate/leadgate/guards/alert"
	"github.com/leadgate/leadgate/guards/loop"
	"github.com/leadgate/leadgate/ingest/filter"
	"github.com/leadgate/leadgate/internal/secretbox"
	"github.com/leadgate/leadgate/models"
)

// GuardsAPI serves the guard settings of a workspace: loop settings and the
// circuit breakers, source filters, silence and health alarms, alert
// channels. Every change is audited in the transaction that makes it.
type GuardsAPI struct {
	Store   *models.Store
	Box     *secretbox.Box
	Log     *slog.Logger
	Filters *filter.Loader         // forgotten after a save (nil: caches expire on their own)
	Breaker *loop.Breaker          // clears Redis counts on reset
	Guards  *alert.WorkspaceGuards // SSRF guard per workspace
	Sender  *alert.Sender          // test sends
	Alarms  *alarm.Monitor         // evaluates an alarm again once saved (nil: at the next check)
	Now     func() time.Time
}

func (g *GuardsAPI) now() time.Time {
	if g.Now != nil {
		return g.Now()
	}
	return time.Now()
}

var hostnamePattern = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$`)

type loopSettingsJSON struct {
	Saved     models.LoopSettings `json:"saved"`
	Effective models.LoopSettings `json:"effective"`
}

// GetLoopSettings answers the saved loop settings and the values in force.
func (g *GuardsAPI) GetLoopSettings(w http.ResponseWriter, r *http.Request) {
	s, err := g.Store.GuardSettingsGet(r.Context(), workspaceFrom(r).ID)
	if err != nil {
		serverError(g.Log, w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, loopSettingsJSON{Saved: s.Loop, Effective: s.Loop.WithDefaults()})
}

// PutLoopSettings replaces the loop settings (0 / "" fields mean the default).
func (g *GuardsAPI) PutLoopSettings(w http.ResponseWriter, r *http.Request) {
	var in models.LoopSettings
	if !decodeJSON(w, r, &in) {
		return
	}
	if field, msg := in.Validate(); field != "" {
		writeError(w, http.StatusBadRequest, field, msg)
		return
	}
	ws := workspaceFrom(r)
	err := g.Store.Tx(r.Context(), func(tx *models.Store) error {
		cur, err := tx.GuardSettingsGet(r.Context(), ws.ID)
		if err != nil {
			return err
		}
		before := cur.Loop
		cur.Loop, cur.UpdatedBy = in, actor(r)
		if err := tx.GuardSettingsSave(r.Context(), cur); err != nil {
			return err
		}
		return tx.AuditRecord(r.Context(), models.Audit{WorkspaceID: ws.ID, Actor: actor(r), Action: "guards.loop.update",
			SubjectType: "guard_settings", SubjectID: ws.Slug, Before: before, After: in})
	})
	if err != nil {
		serverError(g.Log, w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, loopSettingsJSON{Saved: in, Effective: in.WithDefaults()})
}

// GetAlertingSettings answers the heartbeat URL and the allowed hosts.
func (g *GuardsAPI) GetAlertingSettings(w http.ResponseWriter, r *http.Request) {
	s, err := g.Store.GuardSettingsGet(r.Context(), workspaceFrom(r).ID)
	if err != nil {
		serverError(g.Log, w, r, err)
		return
	}
	if s.Alerting.AllowedHosts == nil {
		s.Alerting.AllowedHosts = []string{}
	}
	writeJSON(w, http.StatusOK, s.Alerting)
}

// PutAlertingSettings replaces them (admin only: allowed hosts open the SSRF guard).
func (g *GuardsAPI) PutAlertingSettings(w http.ResponseWriter, r *http.Request) {
	var in models.AlertingSettings
	if !decodeJSON(w, r, &in) {
		return
	}
	if len(in.AllowedHosts) > 20 {
		writeError(w, http.StatusBadRequest, "allowed_hosts", "at most 20 allowed hosts")
		return
	}
	for i, h := range in.AllowedHosts {
		h = strings.ToLower(strings.TrimSpace(h))
		if _, err := netip.ParseAddr(h); err != nil && (len(h) > 253 || !hostnamePattern.MatchString(h)) {
			writeError(w, http.StatusBadRequest, "allowed_hosts["+strconv.Itoa(i)+"]", "an allowed host is a host name or IP address, without scheme, port or wildcard")
			return
		}
		in.AllowedHosts[i] = h
	}
	ws := workspaceFrom(r)
	if in.HeartbeatURL != "" {
		guard := g.Guards.Base
		guard.AllowedHosts = append(append([]string(nil), guard.AllowedHosts...), in.AllowedHosts...)
		if _, err := guard.CheckURL(in.HeartbeatURL); err != nil {
			writeError(w, http.StatusBadRequest, "heartbeat_url", err.Error())
			return
		}
	}
	err := g.Store.Tx(r.Context(), func(tx *models.Store) error {
		cur, err := tx.GuardSettingsGet(r.Context(), ws.ID)
		if err != nil {
			return err
		}
		before := cur.Alerting
		cur.Alerting, cur.UpdatedBy = in, actor(r)
		if err := tx.GuardSettingsSave(r.Context(), cur); err != nil {
			return err
		}
		return tx.AuditRecord(r.Context(), models.Audit{WorkspaceID: ws.ID, Actor: actor(r), Action: "guards.alerting.update",
			SubjectType: "guard_settings", SubjectID: ws.Slug, Before: before, After: in})
	})
	if err != nil {
		serverError(g.Log, w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, in)
}

// ListBreakers answers the workspace's circuit breakers (?status=tripped|reset|all).
func (g *GuardsAPI) ListBreakers(w http.ResponseWriter, r *http.Request) {
	page, ok := pageFrom(w, r)
	if !ok {
		return
	}
	status := r.URL.Query().Get("status")
	if status != "" && status != models.BreakerTripped && status != models.BreakerReset && status != "all" {
		writeError(w, http.StatusBadRequest, "status", "status must be tripped, reset or all")
		return
	}
	list, err := g.Store.BreakerList(r.Context(), workspaceFrom(r).ID, status, page)
	if err != nil {
		writeError(w, http.StatusBadRequest, "cursor", "invalid cursor")
		return
	}
	last := ""
	if len(list) > 0 {
		last = list[len(list)-1].TrippedAt.Format(time.RFC3339Nano)
	}
	writeJSON(w, http.StatusOK, map[string]any{"breakers": list, "next_cursor": nextCursor(len(list), page.Limit, last)})
}

// ResetBreaker closes a contact's tripped breaker: its events flow again
// (its held dead letters stay for an operator to replay or discard).
func (g *GuardsAPI) ResetBreaker(w http.ResponseWriter, r *http.Request) {
	contactID := chi.URLParam(r, "contact")
	if _, err := uuid.Parse(contactID); err != nil {
		writeError(w, http.StatusBadRequest, "contact", "contact must be a contact id")
		return
	}
	ws := workspaceFrom(r)
	var after models.CircuitBreaker
	err := g.Store.Tx(r.Context(), func(tx *models.Store) error {
		var err error
		if after, err = tx.BreakerResetRow(r.Context(), ws.ID, contactID, actor(r)); err != nil {
			return err
		}
		return tx.AuditRecord(r.Context(), models.Audit{WorkspaceID: ws.ID, Actor: actor(r), Action: "guards.breaker.reset",
			SubjectType: "contact", SubjectID: contactID, Before: map[string]string{"status": models.BreakerTripped}, After: after})
	})
	if errors.Is(err, models.ErrNotFound) {
		writeError(w, http.StatusNotFound, "contact", "this contact's circuit breaker is not tripped")
		return
	}
	if err != nil {
		serverError(g.Log, w, r, err)
		return
	}
	if g.Breaker != nil {
		if err := g.Breaker.Clear(r.Context(), ws.ID, contactID); err != nil {
			serverError(g.Log, w, r, errors.Join(errors.New("reset recorded, but its Redis count could not be cleared; retry"), err))
			return
		}
	}
	writeJSON(w, http.StatusOK, after)
}
