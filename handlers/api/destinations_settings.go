package api

import (
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/leadgate/leadgate/handlers"
	"github.com/leadgate/leadgate/models"
)

// GetSideEffectWebhook answers the workspace's side-effect webhook (its secret never leaves the server).
func (h *Destinations) GetSideEffectWebhook(w http.ResponseWriter, r *http.Request) {
	hook, err := h.Store.SideEffectWebhookGet(r.Context(), handlers.WorkspaceFrom(r).ID)
	if errors.Is(err, models.ErrNotFound) {
		handlers.WriteJSON(w, http.StatusOK, map[string]any{"configured": false})
		return
	}
	if err != nil {
		handlers.ServerError(h.Log, w, r, err)
		return
	}
	handlers.WriteJSON(w, http.StatusOK, map[string]any{"configured": true, "url": hook.URL, "enabled": hook.Enabled, "has_secret": len(hook.SecretEnc) > 0})
}

// PutSideEffectWebhook sets where side effects go when no CRM runs them natively:
// {"url":"https://…","secret":"optional HMAC key","enabled":true}. Deliveries carry Idempotency-Key = the
// side effect's stable id.
func (h *Destinations) PutSideEffectWebhook(w http.ResponseWriter, r *http.Request) {
	ws := handlers.WorkspaceFrom(r)
	var in struct {
		URL     string `json:"url"`
		Secret  string `json:"secret"`
		Enabled *bool  `json:"enabled"`
	}
	if !decodeJSON(w, r, &in) {
		return
	}
	u, err := url.Parse(strings.TrimSpace(in.URL))
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		handlers.WriteError(w, http.StatusBadRequest, "url", "url must be an absolute http(s) URL")
		return
	}
	if msg := h.egressRefusal(u.String()); msg != "" {
		handlers.WriteError(w, http.StatusBadRequest, "url", msg)
		return
	}
	sealed, err := h.Box.Seal(in.Secret)
	if err != nil {
		handlers.ServerError(h.Log, w, r, err)
		return
	}
	hook := models.SideEffectWebhook{WorkspaceID: ws.ID, URL: u.String(), SecretEnc: sealed, Enabled: in.Enabled == nil || *in.Enabled}
	err = h.Store.Tx(r.Context(), func(tx *models.Store) error {
		if err := tx.SideEffectWebhookPut(r.Context(), hook); err != nil {
			return err
		}
		return tx.AuditRecord(r.Context(), models.Audit{WorkspaceID: ws.ID, Actor: handlers.Actor(r), Action: "side_effect_webhook.put",
			SubjectType: "workspace", SubjectID: ws.Slug, After: map[string]any{"url": hook.URL, "enabled": hook.Enabled, "has_secret": in.Secret != ""}})
	})
	if err != nil {
		handlers.ServerError(h.Log, w, r, err)
		return
	}
	handlers.WriteJSON(w, http.StatusOK, map[string]any{"configured": true, "url": hook.URL, "enabled": hook.Enabled})
}

// ListHydrationProviders answers the providers configured for hydration (tokens never returned).
func (h *Destinations) ListHydrationProviders(w http.ResponseWriter, r *http.Request) {
	list, err := h.Store.ProviderCredentialList(r.Context(), handlers.WorkspaceFrom(r).ID)
	if err != nil {
		handlers.ServerError(h.Log, w, r, err)
		return
	}
	out := make([]map[string]any, len(list))
	for i, c := range list {
		out[i] = map[string]any{"provider": c.Provider, "base_url": c.BaseURL, "rate_limit_rps": c.RateLimitRPS, "updated_at": c.UpdatedAt}
	}
	handlers.WriteJSON(w, http.StatusOK, map[string]any{"providers": out})
}

// PutHydrationProvider stores a provider token: PUT .../hydration-providers/{provider} with
// {"token":"…","base_url":"optional","rate_limit_rps":0}; provider is meta (a page access token) or hubspot.
func (h *Destinations) PutHydrationProvider(w http.ResponseWriter, r *http.Request) {
	ws := handlers.WorkspaceFrom(r)
	provider := chi.URLParam(r, "provider")
	if provider != models.ProviderMeta && provider != models.ProviderHubSpot {
		handlers.WriteError(w, http.StatusNotFound, "provider", "provider must be meta or hubspot")
		return
	}
	var in struct {
		Token        string `json:"token"`
		BaseURL      string `json:"base_url"`
		RateLimitRPS int    `json:"rate_limit_rps"`
	}
	if !decodeJSON(w, r, &in) {
		return
	}
	if strings.TrimSpace(in.Token) == "" {
		handlers.WriteError(w, http.StatusBadRequest, "token", "token is required")
		return
	}
	if in.RateLimitRPS < 0 || in.RateLimitRPS > 1000 {
		handlers.WriteError(w, http.StatusBadRequest, "rate_limit_rps", "rate_limit_rps must be 0 (default) to 1000")
		return
	}
	if in.BaseURL != "" {
		if u, err := url.Parse(in.BaseURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			handlers.WriteError(w, http.StatusBadRequest, "base_url", "base_url must be an absolute http(s) URL")
			return
		}
		if msg := h.egressRefusal(in.BaseURL); msg != "" {
			handlers.WriteError(w, http.StatusBadRequest, "base_url", msg)
			return
		}
	}
	sealed, err := h.Box.Seal(strings.TrimSpace(in.Token))
	if err != nil {
		handlers.ServerError(h.Log, w, r, err)
		return
	}
	err = h.Store.Tx(r.Context(), func(tx *models.Store) error {
		if err := tx.ProviderCredentialPut(r.Context(), models.ProviderCredential{WorkspaceID: ws.ID, Provider: provider, TokenEnc: sealed,
			BaseURL: in.BaseURL, RateLimitRPS: in.RateLimitRPS}); err != nil {
			return err
		}
		return tx.AuditRecord(r.Context(), models.Audit{WorkspaceID: ws.ID, Actor: handlers.Actor(r), Action: "hydration_provider.put",
			SubjectType: "hydration_provider", SubjectID: provider, After: map[string]any{"base_url": in.BaseURL, "rate_limit_rps": in.RateLimitRPS, "token": "set"}})
	})
	if err != nil {
		handlers.ServerError(h.Log, w, r, err)
		return
	}
	handlers.WriteJSON(w, http.StatusOK, map[string]any{"provider": provider, "configured": true})
}
