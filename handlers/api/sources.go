package api

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/leadgate/leadgate/handlers"
	"github.com/leadgate/leadgate/ingest/signature"
	"github.com/leadgate/leadgate/lifecycle/apply"
	"github.com/leadgate/leadgate/models"
)

func (a *API) sourceView(s models.Source) handlers.SourceJSON {
	return handlers.SourceJSON{ID: s.ID, Name: s.Name, Kind: s.Kind, Channel: s.Channel, IngestURL: a.PublicURL + "/hooks/" + s.Token,
		Enabled: s.Enabled, Config: s.Config, CreatedAt: s.CreatedAt}
}

// CreateSource answers 201 {"id","ingest_url","secret"}; the secret is shown only here and on rotation.
func (a *API) CreateSource(w http.ResponseWriter, r *http.Request) {
	ws := handlers.WorkspaceFrom(r)
	var in handlers.SourceInput
	if !decodeJSON(w, r, &in) {
		return
	}
	secret := in.Secret
	if secret == "" && signature.Known(in.Kind) && signature.GeneratesSecret(in.Kind) {
		var err error
		if secret, err = signature.NewSecret(in.Kind); err != nil {
			handlers.ServerError(a.Log, w, r, err)
			return
		}
	}
	if in.Kind == "facebook-leads" && in.VerifyToken == "" {
		in.VerifyToken = handlers.RandomHex(16)
	}
	if field, msg := handlers.ValidateSource(&in, secret); field != "" {
		handlers.WriteError(w, http.StatusBadRequest, field, msg)
		return
	}
	if !a.stageAliasesOK(w, r, &in) {
		return
	}
	sealed, err := a.Box.Seal(secret)
	if err != nil {
		handlers.ServerError(a.Log, w, r, err)
		return
	}
	src := models.Source{WorkspaceID: ws.ID, Name: in.Name, Kind: in.Kind, Channel: in.Channel, SecretEnc: sealed, Config: in.SourceConfig}
	err = a.Store.Tx(r.Context(), func(tx *models.Store) error {
		if err := tx.SourceCreate(r.Context(), &src); err != nil {
			return err
		}
		return tx.AuditRecord(r.Context(), models.Audit{WorkspaceID: ws.ID, Actor: handlers.Actor(r), Action: "source.create",
			SubjectType: "source", SubjectID: strconv.FormatInt(src.ID, 10), After: a.sourceView(src)})
	})
	if err != nil {
		handlers.ServerError(a.Log, w, r, err)
		return
	}
	out := map[string]any{"id": src.ID, "ingest_url": a.PublicURL + "/hooks/" + src.Token, "secret": secret, "kind": src.Kind}
	if in.VerifyToken != "" {
		out["verify_token"] = in.VerifyToken
	}
	handlers.WriteJSON(w, http.StatusCreated, out)
}

// ListSources answers {"sources":[...]} without secrets.
func (a *API) ListSources(w http.ResponseWriter, r *http.Request) {
	list, err := a.Store.SourceList(r.Context(), handlers.WorkspaceFrom(r).ID)
	if err != nil {
		handlers.ServerError(a.Log, w, r, err)
		return
	}
	out := make([]handlers.SourceJSON, len(list))
	for i, s := range list {
		out[i] = a.sourceView(s)
	}
	handlers.WriteJSON(w, http.StatusOK, map[string]any{"sources": out})
}

// loadSource reads {id} of the current workspace, answering 404 itself.
func (a *API) loadSource(w http.ResponseWriter, r *http.Request) (models.Source, bool) {
	id, err := strconv.ParseInt(chi.URLParam(r, "id"), 10, 64)
	if err != nil {
		handlers.WriteError(w, http.StatusNotFound, "id", "unknown source")
		return models.Source{}, false
	}
	src, err := a.Store.SourceGet(r.Context(), handlers.WorkspaceFrom(r).ID, id)
	if errors.Is(err, models.ErrNotFound) || (err == nil && src.DeletedAt != nil) {
		handlers.WriteError(w, http.StatusNotFound, "id", "unknown source")
		return src, false
	}
	if err != nil {
		handlers.ServerError(a.Log, w, r, err)
		return src, false
	}
	return src, true
}

// stageAliasesOK runs CheckStageAliases, answering 400 or 500 itself.
func (a *API) stageAliasesOK(w http.ResponseWriter, r *http.Request, in *handlers.SourceInput) bool {
	field, msg, err := handlers.CheckStageAliases(r.Context(), a.Store, handlers.WorkspaceFrom(r).ID, in)
	if err != nil {
		handlers.ServerError(a.Log, w, r, err)
		return false
	}
	if field != "" {
		handlers.WriteError(w, http.StatusBadRequest, field, msg)
		return false
	}
	return true
}

// sourceDetailJSON is one source with what it works with: the stage aliases
// in force (its own, or its provider's defaults).
type sourceDetailJSON struct {
	handlers.SourceJSON
	StageAliases        map[string]string `json:"stage_aliases"`
	StageAliasesDefault bool              `json:"stage_aliases_default"`
	// Deliveries counts the deliveries it refused, by reason.
	Deliveries sourceDeliveriesJSON `json:"deliveries"`
	// Alarms are its alarms firing now (signature refusals, silence).
	Alarms []models.FiringAlarm `json:"alarms"`
}

type sourceDeliveriesJSON struct {
	Refused int64 `json:"refused"`
	models.SourceDeliveries
}

// GetSource answers one source.
func (a *API) GetSource(w http.ResponseWriter, r *http.Request) {
	src, ok := a.loadSource(w, r)
	if !ok {
		return
	}
	rules, err := apply.LoadRules(r.Context(), a.Store, src.WorkspaceID)
	if err != nil {
		handlers.ServerError(a.Log, w, r, err)
		return
	}
	aliases, defaults := apply.SourceStageAliases(src, rules)
	deliveries, alarms, err := handlers.SourceHealth(r.Context(), a.Store, src)
	if err != nil {
		handlers.ServerError(a.Log, w, r, err)
		return
	}
	handlers.WriteJSON(w, http.StatusOK, sourceDetailJSON{SourceJSON: a.sourceView(src), StageAliases: aliases, StageAliasesDefault: defaults,
		Deliveries: sourceDeliveriesJSON{Refused: deliveries.Refused(), SourceDeliveries: deliveries}, Alarms: alarms})
}

// sourcePatch is the body of PATCH /sources/{id}; absent fields are unchanged.
type sourcePatch struct {
	Name    *string              `json:"name"`
	Channel *string              `json:"channel"`
	Enabled *bool                `json:"enabled"`
	Config  *models.SourceConfig `json:"config"`
}

// UpdateSource renames, enables/disables or reconfigures a source.
func (a *API) UpdateSource(w http.ResponseWriter, r *http.Request) {
	src, ok := a.loadSource(w, r)
	if !ok {
		return
	}
	var p sourcePatch
	if !decodeJSON(w, r, &p) {
		return
	}
	before := a.sourceView(src)
	in := handlers.SourceInput{Name: src.Name, Kind: src.Kind, Channel: src.Channel, SourceConfig: src.Config}
	if p.Name != nil {
		in.Name = *p.Name
	}
	if p.Channel != nil {
		in.Channel = *p.Channel
	}
	if p.Config != nil {
		in.SourceConfig = *p.Config
	}
	secret, err := a.Box.Open(src.SecretEnc)
	if err != nil {
		handlers.ServerError(a.Log, w, r, err)
		return
	}
	if field, msg := handlers.ValidateSource(&in, secret); field != "" {
		handlers.WriteError(w, http.StatusBadRequest, field, msg)
		return
	}
	if !a.stageAliasesOK(w, r, &in) {
		return
	}
	src.Name, src.Channel, src.Config = in.Name, in.Channel, in.SourceConfig
	if p.Enabled != nil {
		src.Enabled = *p.Enabled
	}
	a.saveSource(w, r, src, "source.update", before)
}

// RotateSourceSecret issues a new secret; the previous one stays valid for
// ?grace= (default 24h) so senders can be switched without dropping deliveries.
func (a *API) RotateSourceSecret(w http.ResponseWriter, r *http.Request) {
	src, ok := a.loadSource(w, r)
	if !ok {
		return
	}
	var in struct {
		Secret       string `json:"secret"`
		GraceSeconds *int   `json:"grace_seconds"`
	}
	if r.ContentLength != 0 && !decodeJSON(w, r, &in) {
		return
	}
	grace := 24 * time.Hour
	if in.GraceSeconds != nil {
		if *in.GraceSeconds < 0 || *in.GraceSeconds > 30*86400 {
			handlers.WriteError(w, http.StatusBadRequest, "grace_seconds", "grace_seconds must be from 0 to 2592000")
			return
		}
		grace = time.Duration(*in.GraceSeconds) * time.Second
	}
	secret := in.Secret
	if secret == "" {
		if !signature.GeneratesSecret(src.Kind) {
			handlers.WriteError(w, http.StatusBadRequest, "secret", "the provider issues this secret: send the new one as \"secret\"")
			return
		}
		var err error
		if secret, err = signature.NewSecret(src.Kind); err != nil {
			handlers.ServerError(a.Log, w, r, err)
			return
		}
	}
	sealed, err := a.Box.Seal(secret)
	if err != nil {
		handlers.ServerError(a.Log, w, r, err)
		return
	}
	until := time.Now().Add(grace)
	src.PreviousSecretEnc, src.PreviousSecretUntil, src.SecretEnc = src.SecretEnc, &until, sealed
	if a.saveSource(w, r, src, "source.rotate_secret", map[string]any{"previous_secret_valid_until": until}) {
		return
	}
}

// DeleteSource soft-deletes: later deliveries answer 410 so senders stop.
func (a *API) DeleteSource(w http.ResponseWriter, r *http.Request) {
	src, ok := a.loadSource(w, r)
	if !ok {
		return
	}
	now := time.Now()
	src.DeletedAt, src.Enabled = &now, false
	a.saveSource(w, r, src, "source.delete", a.sourceView(src))
}

// saveSource persists, audits and answers; it reports whether it answered.
func (a *API) saveSource(w http.ResponseWriter, r *http.Request, src models.Source, action string, before any) bool {
	err := a.Store.Tx(r.Context(), func(tx *models.Store) error {
		if err := tx.SourceUpdate(r.Context(), &src); err != nil {
			return err
		}
		return tx.AuditRecord(r.Context(), models.Audit{WorkspaceID: src.WorkspaceID, Actor: handlers.Actor(r), Action: action,
			SubjectType: "source", SubjectID: strconv.FormatInt(src.ID, 10), Before: before, After: a.sourceView(src)})
	})
	if err != nil {
		handlers.ServerError(a.Log, w, r, err)
		return true
	}
	if a.Sources != nil {
		a.Sources.Forget(src.Token)
	}
	switch action {
	case "source.rotate_secret":
		secret, _ := a.Box.Open(src.SecretEnc)
		handlers.WriteJSON(w, http.StatusOK, map[string]any{"id": src.ID, "secret": secret, "previous_secret_valid_until": src.PreviousSecretUntil})
	case "source.delete":
		w.WriteHeader(http.StatusNoContent)
	default:
		handlers.WriteJSON(w, http.StatusOK, a.sourceView(src))
	}
	return true
}
