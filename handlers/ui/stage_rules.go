package ui

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/a-h/templ"
	"github.com/go-chi/chi/v5"
	"github.com/gorilla/csrf"

	"github.com/leadgate/leadgate/actions"
	"github.com/leadgate/leadgate/handlers"
	"github.com/leadgate/leadgate/lifecycle"
	"github.com/leadgate/leadgate/lifecycle/apply"
	"github.com/leadgate/leadgate/models"
	"github.com/leadgate/leadgate/views"
)

// dryRunListLimit caps each list of the preview.
const dryRunListLimit = 50

// ShowStageRules renders the editor on the rules in force, or on a past
// version (?from=N) to restore it.
func (u *UI) ShowStageRules(w http.ResponseWriter, r *http.Request) {
	ws := handlers.WorkspaceFrom(r)
	rules, err := apply.LoadRules(r.Context(), u.Store, ws.ID)
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	form := rulesForm(rules)
	loaded := 0
	if n, err := strconv.Atoi(r.URL.Query().Get("from")); err == nil && n != rules.Version {
		old, err := u.rulesVersion(r, n)
		if err == nil {
			form = rulesForm(old)
			form.BaseVersion, loaded = rules.Version, n
		} else if !errors.Is(err, models.ErrNotFound) {
			u.serverError(w, r, err)
			return
		}
	}
	u.stageRulesPage(w, r, http.StatusOK, form, nil, nil, loaded)
}

// rulesVersion reads one saved version of the current workspace's rules.
func (u *UI) rulesVersion(r *http.Request, n int) (lifecycle.Rules, error) {
	list, err := u.Store.StageRulesList(r.Context(), handlers.WorkspaceFrom(r).ID)
	if err != nil {
		return lifecycle.Rules{}, err
	}
	for _, v := range list {
		if v.Version == n {
			var rules lifecycle.Rules
			if err := json.Unmarshal(v.Rules, &rules); err != nil {
				return rules, err
			}
			rules.Version = v.Version
			return rules, nil
		}
	}
	return lifecycle.Rules{}, models.ErrNotFound
}

func (u *UI) stageRulesPage(w http.ResponseWriter, r *http.Request, status int, form views.RulesForm, errs views.FieldErrors, dry *views.DryRunView, loaded int) {
	v, err := u.stageRulesView(r, form, errs, dry)
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	v.LoadedVer = loaded
	u.page(w, r, status, views.NavStages, "Stage rules", func(m views.PageMeta) templ.Component { return views.StageRulesPage(m, v) })
}

func (u *UI) stageRulesView(r *http.Request, form views.RulesForm, errs views.FieldErrors, dry *views.DryRunView) (views.StageRulesView, error) {
	ws := handlers.WorkspaceFrom(r)
	if form.Days == 0 {
		form.Days = 7
	}
	v := views.StageRulesView{Workspace: wsRef(ws), Form: withBlankRows(form), Errors: errs, DryRun: dry, CanEdit: canEdit(r), Policies: policyOptions()}
	versions, err := u.Store.StageRulesList(r.Context(), ws.ID)
	if err != nil {
		return v, err
	}
	for i, ver := range versions {
		v.Versions = append(v.Versions, views.RulesVersion{Version: ver.Version, CreatedBy: ver.CreatedBy, CreatedAt: ver.CreatedAt, Current: i == 0})
	}
	if len(versions) > 0 {
		v.Current = versions[0].Version
	}
	sources, err := u.Store.SourceList(r.Context(), ws.ID)
	if err != nil {
		return v, err
	}
	draft, _ := rulesFromForm(lifecycle.DefaultRules(), form)
	for _, s := range sources {
		m := views.SourceMapping{ID: s.ID, Name: s.Name, Rows: append(stageRows(s.Config.EventStages), views.StageRow{})}
		for _, st := range s.Config.EventStages {
			if _, ok := draft.Canonical(st); !ok {
				m.Unknown = append(m.Unknown, st)
			}
		}
		v.Sources = append(v.Sources, m)
	}
	return v, nil
}

// DraftStageRules applies one editor button (reorder, remove, add) to the
// posted draft and renders the editor again: the fragment for htmx, else the page.
func (u *UI) DraftStageRules(w http.ResponseWriter, r *http.Request) {
	form := parseRulesForm(r)
	errs := views.FieldErrors{}
	if field, msg := applyDraftOp(&form, r.PostFormValue("op")); field != "" {
		errs[field] = msg
	}
	if isHTMX(r) {
		v, err := u.stageRulesView(r, form, errs, nil)
		if err != nil {
			u.serverError(w, r, err)
			return
		}
		u.render(w, r, http.StatusOK, views.RulesEditor(csrf.Token(r), v))
		return
	}
	u.stageRulesPage(w, r, http.StatusOK, form, errs, nil, 0)
}

// DryRunStageRulesUI previews the draft: the last N days of events replayed
// under it, compared with today's stages. Nothing is written.
func (u *UI) DryRunStageRulesUI(w http.ResponseWriter, r *http.Request) {
	ws := handlers.WorkspaceFrom(r)
	form := parseRulesForm(r)
	if form.Days < 1 || form.Days > 90 {
		form.Days = 7
	}
	base, err := apply.LoadRules(r.Context(), u.Store, ws.ID)
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	rules, errs := rulesFromForm(base, form)
	dry := views.DryRunView{Days: form.Days, Errors: errs}
	if !errs.Any() {
		res, err := apply.DryRun(r.Context(), u.Store, ws.ID, rules, u.now().Add(-time.Duration(form.Days)*24*time.Hour))
		if err != nil {
			u.serverError(w, r, err)
			return
		}
		dry = dryRunView(form.Days, res)
	}
	if isHTMX(r) {
		// htmx swaps only 2xx answers: the problems are in the fragment.
		u.render(w, r, http.StatusOK, views.DryRunPanel(wsRef(ws), dry))
		return
	}
	u.stageRulesPage(w, r, http.StatusOK, form, errs, &dry, 0)
}

func dryRunView(days int, res apply.DryRunResult) views.DryRunView {
	t := res.Totals
	d := views.DryRunView{Days: days, Events: res.Events, Contacts: t.Contacts, Applied: t.Applied, Unchanged: t.Unchanged,
		Quarantined: t.Quarantined, Dropped: t.Dropped, Waiting: t.Waiting}
	for i, c := range res.StageChanges {
		if i == dryRunListLimit {
			d.MoreChanges = len(res.StageChanges) - i
			break
		}
		_, who, _ := strings.Cut(c.ContactKey, ":")
		d.Changes = append(d.Changes, views.DryRunChange{Contact: who, ContactID: c.ContactID, Current: c.Current, WouldBe: c.WouldBe})
	}
	add := func(list []lifecycle.EventVerdict, outcome string) {
		for _, e := range list {
			if len(d.Verdicts) == dryRunListLimit {
				d.MoreVerdict++
				continue
			}
			d.Verdicts = append(d.Verdicts, views.DryRunVerdict{EventID: e.EventID, EventType: e.EventType, Outcome: outcome, Kind: e.Kind, Why: decisionWhy(e.Decision), Reason: e.Reason})
		}
	}
	add(res.Quarantined, models.EventQuarantined)
	add(res.Dropped, models.EventDropped)
	return d
}

// stageRuleActions is the stage-rule actions over the UI's store, the same the API runs.
func (u *UI) stageRuleActions() actions.StageRules { return actions.StageRules{Store: u.Store} }

// SaveStageRules validates the draft and saves it as the next version
// through the save action (one transaction with its audit entry), as the API does.
func (u *UI) SaveStageRules(w http.ResponseWriter, r *http.Request) {
	ws := handlers.WorkspaceFrom(r)
	form := parseRulesForm(r)
	current, err := apply.LoadRules(r.Context(), u.Store, ws.ID)
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	rules, errs := rulesFromForm(current, form)
	if !errs.Any() && current.Version != form.BaseVersion {
		errs["form"] = "Someone saved version " + strconv.Itoa(current.Version) + " while you were editing. Review your draft against it (open the version history), then save again."
		form.BaseVersion = current.Version
	}
	if errs.Any() {
		u.stageRulesPage(w, r, http.StatusUnprocessableEntity, form, errs, nil, 0)
		return
	}
	saved, err := u.stageRuleActions().Save(r.Context(), ws.ID, handlers.Actor(r), rules)
	var conflict *actions.ConflictError
	var field *actions.FieldError
	switch {
	case errors.As(err, &conflict):
		u.stageRulesPage(w, r, http.StatusUnprocessableEntity, form, views.FieldErrors{"form": "Another change was saved at the same moment; save again."}, nil, 0)
		return
	case errors.As(err, &field):
		u.stageRulesPage(w, r, http.StatusUnprocessableEntity, form, views.FieldErrors{rulesFieldKey(field.Field): field.Message}, nil, 0)
		return
	case err != nil:
		u.serverError(w, r, fmt.Errorf("ui: save stage rules: %w", err))
		return
	}
	u.flashRedirect(w, r, "/w/"+ws.Slug+"/stages", "ok", "Stage rules saved as version "+strconv.Itoa(saved.Version)+". New events follow them now.")
}

// ShowStageRulesVersion renders one saved version's JSON.
func (u *UI) ShowStageRulesVersion(w http.ResponseWriter, r *http.Request) {
	ws := handlers.WorkspaceFrom(r)
	n, err := strconv.Atoi(chi.URLParam(r, "version"))
	if err != nil {
		u.NotFound(w, r)
		return
	}
	list, err := u.Store.StageRulesList(r.Context(), ws.ID)
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	for i, ver := range list {
		if ver.Version != n {
			continue
		}
		v := views.RulesVersionView{Workspace: wsRef(ws), JSON: prettyJSON(ver.Rules), CanEdit: canEdit(r),
			Version: views.RulesVersion{Version: ver.Version, CreatedBy: ver.CreatedBy, CreatedAt: ver.CreatedAt, Current: i == 0}}
		// Newest first: the version before this one is the next in the list;
		// the first version is compared with the defaults it replaced.
		if i+1 < len(list) {
			v.DiffAgainst, v.Diff = "v"+strconv.Itoa(list[i+1].Version), auditDiff(list[i+1].Rules, ver.Rules)
		} else if def, err := json.Marshal(lifecycle.DefaultRules()); err == nil {
			v.DiffAgainst, v.Diff = "the defaults", auditDiff(def, ver.Rules)
		}
		u.page(w, r, http.StatusOK, views.NavStages, "Stage rules v"+strconv.Itoa(n), func(m views.PageMeta) templ.Component { return views.RulesVersionPage(m, v) })
		return
	}
	u.NotFound(w, r)
}

// SaveSourceMapping saves one source's event → stage mapping from the rules
// editor, audited like any source change.
func (u *UI) SaveSourceMapping(w http.ResponseWriter, r *http.Request) {
	src, ok := u.loadSource(w, r)
	if !ok {
		return
	}
	_, in, errs := parseSourceForm(r)
	back := "/w/" + handlers.WorkspaceFrom(r).Slug + "/stages"
	if errs.Any() {
		u.flashRedirect(w, r, back, "error", src.Name+": "+errs["event_stages"])
		return
	}
	before := u.sourceAudit(src)
	src.Config.EventStages = in.EventStages
	if u.saveSource(w, r, src, "source.update", before) {
		u.flashRedirect(w, r, back, "ok", "Event mapping of "+src.Name+" saved.")
	}
}
