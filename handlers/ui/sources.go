package ui

import (
	"errors"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/a-h/templ"
	"github.com/go-chi/chi/v5"

	"github.com/leadgate/leadgate/guards/alarm"
	"github.com/leadgate/leadgate/handlers"
	"github.com/leadgate/leadgate/ingest"
	"github.com/leadgate/leadgate/ingest/signature"
	"github.com/leadgate/leadgate/internal/principal"
	"github.com/leadgate/leadgate/lifecycle"
	"github.com/leadgate/leadgate/lifecycle/apply"
	"github.com/leadgate/leadgate/models"
	"github.com/leadgate/leadgate/views"
)

// blankStageRows is how many empty mapping rows a form offers without JavaScript.
const blankStageRows = 3

// maxStageRows caps the mapping rows one form may submit.
const maxStageRows = 100

// ListSources shows the workspace's sources.
func (u *UI) ListSources(w http.ResponseWriter, r *http.Request) {
	ws := handlers.WorkspaceFrom(r)
	rows, err := u.sourceRows(r, ws.ID)
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	v := views.SourcesView{Workspace: wsRef(ws), Sources: rows, CanEdit: canEdit(r), Now: u.now()}
	u.page(w, r, http.StatusOK, views.NavSources, "Sources", func(m views.PageMeta) templ.Component { return views.SourcesPage(m, v) })
}

func (u *UI) sourceRows(r *http.Request, wsID int64) ([]views.SourceRow, error) {
	list, err := u.Store.SourceList(r.Context(), wsID)
	if err != nil {
		return nil, err
	}
	activity, err := u.Store.SourceActivityList(r.Context(), wsID, u.now())
	if err != nil {
		return nil, err
	}
	firing, err := u.Store.AlarmsFiringAt(r.Context(), wsID, u.now())
	if err != nil {
		return nil, err
	}
	alarms := sourceAlarmStates(firing, u.now())
	rows := make([]views.SourceRow, len(list))
	for i, s := range list {
		rows[i] = u.sourceRow(s)
		rows[i].LastEvent = activity[s.ID].LastEvent
		rows[i].Alarm = alarms[s.ID]
	}
	return rows, nil
}

func (u *UI) sourceRow(s models.Source) views.SourceRow {
	return views.SourceRow{ID: s.ID, Name: s.Name, Kind: s.Kind, Channel: s.Channel, Enabled: s.Enabled,
		IngestURL: u.PublicURL + "/hooks/" + s.Token, CreatedAt: s.CreatedAt}
}

// sourceAudit is how a source appears in the audit history (the API's shape; no secrets).
func (u *UI) sourceAudit(s models.Source) handlers.SourceJSON {
	return handlers.SourceJSON{ID: s.ID, Name: s.Name, Kind: s.Kind, Channel: s.Channel, IngestURL: u.PublicURL + "/hooks/" + s.Token,
		Enabled: s.Enabled, Config: s.Config, CreatedAt: s.CreatedAt}
}

// NewSource shows the create form.
func (u *UI) NewSource(w http.ResponseWriter, r *http.Request) {
	ws := handlers.WorkspaceFrom(r)
	form := views.SourceForm{Kind: signature.KindStandardWebhooks, Stages: padStages(nil)}
	u.sourceFormPage(w, r, http.StatusOK, u.sourceFormView(ws, u.sourceRules(r, ws.ID), form, nil, false, 0))
}

// StageRow is the fragment htmx appends when the user adds a mapping row.
func (u *UI) StageRow(w http.ResponseWriter, r *http.Request) {
	ws := handlers.WorkspaceFrom(r)
	rules := u.sourceRules(r, ws.ID)
	u.render(w, r, http.StatusOK, views.StageRowInputs(views.StageRow{}, stageChoices(rules)))
}

func (u *UI) sourceFormView(ws models.Workspace, rules lifecycle.Rules, form views.SourceForm, errs views.FieldErrors, editing bool, id int64) views.SourceFormView {
	v := views.SourceFormView{Workspace: wsRef(ws), Form: form, Errors: errs, Editing: editing, Action: "/w/" + ws.Slug + "/sources",
		StageChoices: stageChoices(rules)}
	if editing {
		v.Action += "/" + strconv.FormatInt(id, 10)
	}
	for _, k := range signature.Kinds() {
		v.Kinds = append(v.Kinds, views.KindOption{Value: k, ProviderSecret: !signature.GeneratesSecret(k)})
	}
	if !editing {
		for _, k := range signature.Kinds() {
			if d, _ := apply.SourceStageAliases(models.Source{Kind: k}, rules); len(d) > 0 {
				v.ProviderDefaults = append(v.ProviderDefaults, views.ProviderAliases{Kind: k, Aliases: stageRows(d)})
			}
		}
	}
	return v
}

// stageChoices are the stages a mapping may name: the ordered ones, then the terminal ones.
func stageChoices(rules lifecycle.Rules) []string {
	return append(append([]string{}, rules.Stages...), rules.Terminal...)
}

// sourceRules are the workspace's rules for the source form (defaults on error:
// the form still renders, and saving validates against the stored rules).
func (u *UI) sourceRules(r *http.Request, wsID int64) lifecycle.Rules {
	rules, err := apply.LoadRules(r.Context(), u.Store, wsID)
	if err != nil {
		u.Log.Warn("ui: load stage rules for the source form", "err", err)
		return lifecycle.DefaultRules()
	}
	return rules
}

func (u *UI) sourceFormPage(w http.ResponseWriter, r *http.Request, status int, v views.SourceFormView) {
	u.page(w, r, status, views.NavSources, "New source", func(m views.PageMeta) templ.Component { return views.NewSourcePage(m, v) })
}

// parseSourceForm reads the form into its view shape and the API's input,
// reporting mapping-row problems the shared validator does not know about.
func parseSourceForm(r *http.Request) (views.SourceForm, handlers.SourceInput, views.FieldErrors) {
	f := views.SourceForm{
		Name: r.PostFormValue("name"), Kind: r.PostFormValue("kind"), Channel: strings.TrimSpace(r.PostFormValue("channel")),
		DefaultRegion: strings.TrimSpace(r.PostFormValue("default_region")), Secret: r.PostFormValue("secret"),
	}
	errs := views.FieldErrors{}
	events, stages := r.PostForm["stage_event"], r.PostForm["stage_name"]
	mapping := map[string]string{}
	for i := range min(len(events), maxStageRows) {
		ev, st := strings.TrimSpace(events[i]), ""
		if i < len(stages) {
			st = strings.TrimSpace(stages[i])
		}
		if ev == "" && st == "" {
			continue
		}
		f.Stages = append(f.Stages, views.StageRow{Event: ev, Stage: st})
		switch {
		case ev == "" || st == "":
			errs["event_stages"] = "Each mapping row needs both an event type and a stage."
		case mapping[ev] != "":
			errs["event_stages"] = "The event type " + strconv.Quote(ev) + " is mapped twice."
		case len(ev) > 100 || len(st) > 100:
			errs["event_stages"] = "Event types and stages are at most 100 characters."
		}
		mapping[ev] = st
	}
	in := handlers.SourceInput{Name: f.Name, Kind: f.Kind, Channel: f.Channel}
	in.DefaultRegion = f.DefaultRegion
	if len(mapping) > 0 {
		in.EventStages = mapping
	}
	values, targets := r.PostForm["alias_value"], r.PostForm["alias_stage"]
	for i := range min(len(values), handlers.MaxStageAliases) {
		v, st := strings.TrimSpace(values[i]), ""
		if i < len(targets) {
			st = strings.TrimSpace(targets[i])
		}
		if v == "" && st == "" {
			continue
		}
		f.Aliases = append(f.Aliases, views.StageRow{Event: v, Stage: st})
		if v == "" || st == "" {
			errs["stage_aliases"] = "Each alias row needs both the source's value and a stage."
		}
		if in.StageAliases == nil {
			in.StageAliases = map[string]string{}
		}
		in.StageAliases[v] = st
	}
	return f, in, errs
}

// padStages appends blank rows so the form works without JavaScript.
func padStages(rows []views.StageRow) []views.StageRow {
	for range blankStageRows {
		rows = append(rows, views.StageRow{})
	}
	return rows
}

// fieldFor maps a ValidateSource field onto the form's inputs.
func fieldFor(field string, editing bool) string {
	switch field {
	case "name", "kind", "channel", "default_region", "event_stages":
		return field
	case "secret":
		if !editing {
			return field
		}
	}
	return "form"
}

// CreateSource validates, seals the secret, stores and audits, then shows
// the ingest URL and secret once.
func (u *UI) CreateSource(w http.ResponseWriter, r *http.Request) {
	ws := handlers.WorkspaceFrom(r)
	form, in, errs := parseSourceForm(r)
	secret := strings.TrimSpace(form.Secret)
	if secret == "" && signature.Known(in.Kind) && signature.GeneratesSecret(in.Kind) {
		var err error
		if secret, err = signature.NewSecret(in.Kind); err != nil {
			u.serverError(w, r, err)
			return
		}
	}
	if in.Kind == signature.KindFacebookLeads {
		in.VerifyToken = handlers.RandomHex(16)
	}
	if !errs.Any() {
		if field, msg := handlers.ValidateSource(&in, secret); field != "" {
			errs[fieldFor(field, false)] = msg
		}
	}
	if !errs.Any() && !u.stageAliasesOK(w, r, &in, errs) {
		return
	}
	if errs.Any() {
		form.Stages = padStages(form.Stages)
		form.Secret = ""
		u.sourceFormPage(w, r, http.StatusUnprocessableEntity, u.sourceFormView(ws, u.sourceRules(r, ws.ID), form, errs, false, 0))
		return
	}
	sealed, err := u.Box.Seal(secret)
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	src := models.Source{WorkspaceID: ws.ID, Name: in.Name, Kind: in.Kind, Channel: in.Channel, SecretEnc: sealed, Config: in.SourceConfig}
	err = u.Store.Tx(r.Context(), func(tx *models.Store) error {
		if err := tx.SourceCreate(r.Context(), &src); err != nil {
			return err
		}
		return auditUI(r.Context(), tx, r, ws.ID, "source.create", "source", strconv.FormatInt(src.ID, 10), nil, u.sourceAudit(src))
	})
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	v := views.SourceSecretView{Workspace: wsRef(ws), Source: u.sourceRow(src), Secret: secret, VerifyToken: in.VerifyToken}
	u.page(w, r, http.StatusCreated, views.NavSources, src.Name, func(m views.PageMeta) templ.Component { return views.SourceSecretPage(m, v) })
}

// loadSource reads {id} of the current workspace, answering 404 itself.
func (u *UI) loadSource(w http.ResponseWriter, r *http.Request) (models.Source, bool) {
	id, err := strconv.ParseInt(chi.URLParam(r, "id"), 10, 64)
	if err != nil {
		u.NotFound(w, r)
		return models.Source{}, false
	}
	src, err := u.Store.SourceGet(r.Context(), handlers.WorkspaceFrom(r).ID, id)
	if errors.Is(err, models.ErrNotFound) || (err == nil && src.DeletedAt != nil) {
		u.NotFound(w, r)
		return src, false
	}
	if err != nil {
		u.serverError(w, r, err)
		return src, false
	}
	return src, true
}

// ShowSource renders one source with its actions and edit form.
func (u *UI) ShowSource(w http.ResponseWriter, r *http.Request) {
	src, ok := u.loadSource(w, r)
	if !ok {
		return
	}
	u.sourceDetail(w, r, http.StatusOK, src, nil, nil)
}

func (u *UI) sourceDetail(w http.ResponseWriter, r *http.Request, status int, src models.Source, form *views.SourceForm, errs views.FieldErrors) {
	ws := handlers.WorkspaceFrom(r)
	activity, err := u.Store.SourceActivityList(r.Context(), ws.ID, u.now())
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	stages := stageRows(src.Config.EventStages)
	rules := u.sourceRules(r, ws.ID)
	aliases, aliasesDefault := apply.SourceStageAliases(src, rules)
	if form == nil {
		form = &views.SourceForm{Name: src.Name, Kind: src.Kind, Channel: src.Channel, DefaultRegion: src.Config.DefaultRegion, Stages: stages,
			Aliases: stageRows(aliases)}
	}
	form.Stages = padStages(form.Stages)
	form.Aliases = append(form.Aliases, views.StageRow{})
	row := u.sourceRow(src)
	row.LastEvent = activity[src.ID].LastEvent
	edit := u.sourceFormView(ws, rules, *form, errs, true, src.ID)
	edit.AliasesDefault = aliasesDefault
	deliveries, alarms, err := handlers.SourceHealth(r.Context(), u.Store, src)
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	v := views.SourceDetailView{Workspace: wsRef(ws), Source: row, Region: src.Config.DefaultRegion, Stages: stages,
		Aliases: stageRows(aliases), AliasesDefault: aliasesDefault, Refused: deliveries.Refused(), RefusedBy: refusedBy(deliveries),
		Edit: edit, CanEdit: canEdit(r), Now: u.now()}
	for _, a := range alarms {
		v.Alarms = append(v.Alarms, views.SourceAlarmView{Message: a.Message, Since: a.Since})
	}
	if v.Silence, err = u.sourceSilence(r, src); err != nil {
		u.serverError(w, r, err)
		return
	}
	u.page(w, r, status, views.NavSources, src.Name, func(m views.PageMeta) templ.Component { return views.SourceDetailPage(m, v) })
}

// sourceSilence states the rule of the source's silence alarm: its learned
// rhythm, or that it is still learning and the static rule applies.
func (u *UI) sourceSilence(r *http.Request, src models.Source) (string, error) {
	list, err := u.Store.SilenceAlarmList(r.Context(), src.WorkspaceID)
	if err != nil {
		return "", err
	}
	for _, a := range list {
		if a.SourceID != nil && *a.SourceID == src.ID && a.Metric == models.SilenceApply {
			return (&alarm.Monitor{Store: u.Store}).DescribeSilence(r.Context(), a, u.now())
		}
	}
	return "None yet: add one under Guards & alerts and it learns this source's weekly rhythm.", nil
}

// refusedBy spells a source's refused deliveries by reason.
func refusedBy(d models.SourceDeliveries) string {
	var parts []string
	for _, c := range []struct {
		n    int64
		what string
	}{{d.RefusedSignature, "signature"}, {d.RefusedMalformed, "malformed"}, {d.RefusedTooLarge, "too large"}, {d.RefusedUnsupported, "unsupported type"}} {
		if c.n > 0 {
			parts = append(parts, strconv.FormatInt(c.n, 10)+" "+c.what)
		}
	}
	return strings.Join(parts, ", ")
}

func stageRows(m map[string]string) []views.StageRow {
	rows := make([]views.StageRow, 0, len(m))
	for ev, st := range m {
		rows = append(rows, views.StageRow{Event: ev, Stage: st})
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].Event < rows[j].Event })
	return rows
}

// UpdateSource saves name, channel, region and the event→stage mapping.
func (u *UI) UpdateSource(w http.ResponseWriter, r *http.Request) {
	src, ok := u.loadSource(w, r)
	if !ok {
		return
	}
	form, in, errs := parseSourceForm(r)
	form.Kind, in.Kind = src.Kind, src.Kind
	cfg := src.Config
	cfg.DefaultRegion, cfg.EventStages, cfg.StageAliases = in.DefaultRegion, in.EventStages, in.StageAliases
	in.SourceConfig = cfg
	secret, err := u.Box.Open(src.SecretEnc)
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	if !errs.Any() {
		if field, msg := handlers.ValidateSource(&in, secret); field != "" {
			errs[fieldFor(field, true)] = msg
		}
	}
	if !errs.Any() && !u.stageAliasesOK(w, r, &in, errs) {
		return
	}
	if errs.Any() {
		u.sourceDetail(w, r, http.StatusUnprocessableEntity, src, &form, errs)
		return
	}
	before := u.sourceAudit(src)
	src.Name, src.Channel, src.Config = in.Name, in.Channel, in.SourceConfig
	if !u.saveSource(w, r, src, "source.update", before) {
		return
	}
	u.flashRedirect(w, r, sourcePath(src, handlers.WorkspaceFrom(r)), "ok", "Source saved.")
}

// SetSourceEnabled enables or disables a source (disabled answers 503 to senders).
func (u *UI) SetSourceEnabled(w http.ResponseWriter, r *http.Request) {
	src, ok := u.loadSource(w, r)
	if !ok {
		return
	}
	enabled := r.PostFormValue("enabled") == "true"
	before := u.sourceAudit(src)
	src.Enabled = enabled
	action, msg := "source.disable", "Source disabled: deliveries now answer 503 so senders retry later."
	if enabled {
		action, msg = "source.enable", "Source enabled."
	}
	if u.saveSource(w, r, src, action, before) {
		u.flashRedirect(w, r, sourcePath(src, handlers.WorkspaceFrom(r)), "ok", msg)
	}
}

// RotateSourceSecret issues a new secret (or takes the provider's) and keeps
// the previous one valid for 24 h; the new secret is shown once.
func (u *UI) RotateSourceSecret(w http.ResponseWriter, r *http.Request) {
	src, ok := u.loadSource(w, r)
	if !ok {
		return
	}
	ws := handlers.WorkspaceFrom(r)
	secret := strings.TrimSpace(r.PostFormValue("secret"))
	if secret == "" {
		if !signature.GeneratesSecret(src.Kind) {
			u.flashRedirect(w, r, sourcePath(src, ws), "error", "The provider issues this source's secret: paste the new one to rotate.")
			return
		}
		var err error
		if secret, err = signature.NewSecret(src.Kind); err != nil {
			u.serverError(w, r, err)
			return
		}
	}
	if err := signature.ValidateConfig(src.Kind, ingest.VerifyConfig(src.Config, []string{secret})); err != nil {
		u.flashRedirect(w, r, sourcePath(src, ws), "error", "That secret cannot verify this kind: "+err.Error())
		return
	}
	sealed, err := u.Box.Seal(secret)
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	until := u.now().Add(24 * time.Hour)
	src.PreviousSecretEnc, src.PreviousSecretUntil, src.SecretEnc = src.SecretEnc, &until, sealed
	if !u.saveSource(w, r, src, "source.rotate_secret", nil) {
		return
	}
	v := views.SourceSecretView{Workspace: wsRef(ws), Source: u.sourceRow(src), Secret: secret, Rotated: true, PreviousValidUntil: &until}
	u.page(w, r, http.StatusOK, views.NavSources, src.Name, func(m views.PageMeta) templ.Component { return views.SourceSecretPage(m, v) })
}

// DeleteSource soft-deletes: later deliveries answer 410 so senders stop.
func (u *UI) DeleteSource(w http.ResponseWriter, r *http.Request) {
	src, ok := u.loadSource(w, r)
	if !ok {
		return
	}
	before := u.sourceAudit(src)
	now := u.now()
	src.DeletedAt, src.Enabled = &now, false
	if u.saveSource(w, r, src, "source.delete", before) {
		u.flashRedirect(w, r, "/w/"+handlers.WorkspaceFrom(r).Slug+"/sources", "ok", "Source "+src.Name+" deleted.")
	}
}

// saveSource persists and audits in one transaction; false means it answered with an error.
func (u *UI) saveSource(w http.ResponseWriter, r *http.Request, src models.Source, action string, before any) bool {
	err := u.Store.Tx(r.Context(), func(tx *models.Store) error {
		if err := tx.SourceUpdate(r.Context(), &src); err != nil {
			return err
		}
		after := any(u.sourceAudit(src))
		if action == "source.rotate_secret" {
			after = map[string]any{"previous_secret_valid_until": src.PreviousSecretUntil}
		}
		return auditUI(r.Context(), tx, r, src.WorkspaceID, action, "source", strconv.FormatInt(src.ID, 10), before, after)
	})
	if err != nil {
		u.serverError(w, r, err)
		return false
	}
	if u.Sources != nil {
		u.Sources.Forget(src.Token)
	}
	return true
}

// stageAliasesOK runs CheckStageAliases, putting a problem into errs; false
// means it answered (a server error).
func (u *UI) stageAliasesOK(w http.ResponseWriter, r *http.Request, in *handlers.SourceInput, errs views.FieldErrors) bool {
	field, msg, err := handlers.CheckStageAliases(r.Context(), u.Store, handlers.WorkspaceFrom(r).ID, in)
	if err != nil {
		u.serverError(w, r, err)
		return false
	}
	if field != "" {
		errs[field] = msg
	}
	return true
}

func sourcePath(src models.Source, ws models.Workspace) string {
	return "/w/" + ws.Slug + "/sources/" + strconv.FormatInt(src.ID, 10)
}

// canEdit reports whether the signed-in role may change configuration.
func canEdit(r *http.Request) bool {
	p, _ := principal.From(r.Context())
	return models.RoleAtLeast(p.Role, models.RoleEditor)
}
