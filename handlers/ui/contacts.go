package ui

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/a-h/templ"
	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"

	"github.com/leadgate/leadgate/actions"
	"github.com/leadgate/leadgate/handlers"
	"github.com/leadgate/leadgate/ingest/normalize"
	"github.com/leadgate/leadgate/internal/principal"
	"github.com/leadgate/leadgate/lifecycle"
	"github.com/leadgate/leadgate/lifecycle/apply"
	"github.com/leadgate/leadgate/models"
	"github.com/leadgate/leadgate/views"
)

// contactsPageSize is how many contacts one search page shows.
const contactsPageSize = 50

// ListContacts searches contacts: ?q= is read as an email, a phone number or
// free text (names, company); ?stage= narrows to one stage.
func (u *UI) ListContacts(w http.ResponseWriter, r *http.Request) {
	ws := handlers.WorkspaceFrom(r)
	q := r.URL.Query()
	v := views.ContactsView{Workspace: wsRef(ws), Query: strings.TrimSpace(q.Get("q")), Stage: q.Get("stage"), Now: u.now()}
	rules, err := apply.LoadRules(r.Context(), u.Store, ws.ID)
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	v.Stages = stageOptions(rules)
	f := models.ContactFilter{WorkspaceID: ws.ID}
	if canon, ok := rules.Canonical(v.Stage); ok {
		f.Stage, v.Stage = canon, canon
	} else {
		v.Stage = ""
	}
	v.SearchBy = contactQuery(v.Query, &f)
	page := models.Page{Limit: contactsPageSize, Cursor: q.Get("cursor")}
	if _, err := uuid.Parse(page.Cursor); err != nil {
		page.Cursor = ""
	}
	list, err := u.Store.ContactList(r.Context(), f, page)
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	for _, c := range list {
		v.Contacts = append(v.Contacts, contactRow(c))
	}
	v.HasAny = len(list) > 0 || page.Cursor != ""
	if !v.HasAny && (v.Query != "" || v.Stage != "") {
		any, err := u.Store.ContactList(r.Context(), models.ContactFilter{WorkspaceID: ws.ID}, models.Page{Limit: 1})
		if err != nil {
			u.serverError(w, r, err)
			return
		}
		v.HasAny = len(any) > 0
	}
	base := url.Values{}
	if v.Query != "" {
		base.Set("q", v.Query)
	}
	if v.Stage != "" {
		base.Set("stage", v.Stage)
	}
	path := "/w/" + ws.Slug + "/contacts"
	if page.Cursor != "" {
		v.FirstURL = withQuery(path, base)
	}
	if len(list) == contactsPageSize {
		base.Set("cursor", list[len(list)-1].ID)
		v.NextURL = withQuery(path, base)
	}
	u.page(w, r, http.StatusOK, views.NavContacts, "Contacts", func(m views.PageMeta) templ.Component { return views.ContactsPage(m, v) })
}

// contactQuery reads the search box into f: a valid email or phone number
// matches exactly (normalized, so any spelling finds it); anything else is a
// substring of email, phone, names or company. It reports which it used.
func contactQuery(q string, f *models.ContactFilter) string {
	if q == "" {
		return ""
	}
	if strings.Contains(q, "@") {
		if e := normalize.Email(q); e.Valid {
			f.Email = e.Value
			return "email"
		}
	}
	if looksLikePhone(q) {
		if p := normalize.Phone(q, ""); p.Valid {
			f.Phone = p.Value
			return "phone"
		}
		// A national number without its region: match the digits.
		f.Query = strings.Map(func(r rune) rune {
			if unicode.IsDigit(r) {
				return r
			}
			return -1
		}, q)
		return "text"
	}
	f.Query = q
	return "text"
}

// looksLikePhone reports input made of phone punctuation with at least 7 digits.
func looksLikePhone(s string) bool {
	digits := 0
	for _, r := range s {
		switch {
		case unicode.IsDigit(r):
			digits++
		case strings.ContainsRune("+-(). ", r):
		default:
			return false
		}
	}
	return digits >= 7
}

func stageOptions(rules lifecycle.Rules) []views.Option {
	out := make([]views.Option, 0, len(rules.Stages)+len(rules.Terminal))
	for _, s := range rules.Stages {
		out = append(out, views.Option{Value: s, Label: s})
	}
	for _, s := range rules.Terminal {
		out = append(out, views.Option{Value: s, Label: s + " (terminal)"})
	}
	return out
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func contactRow(c models.Contact) views.ContactRow {
	name := strings.TrimSpace(deref(c.FirstName) + " " + deref(c.LastName))
	return views.ContactRow{ID: c.ID, Name: name, Email: deref(c.Email), Phone: deref(c.Phone), Company: deref(c.Company),
		Stage: c.Stage, Score: c.Score, LastActivity: c.LastActivityAt, Erased: c.ErasedAt != nil}
}

// loadUIContact reads {id} of the current workspace, answering 404 itself.
func (u *UI) loadUIContact(w http.ResponseWriter, r *http.Request) (models.Contact, bool) {
	id := chi.URLParam(r, "id")
	if _, err := uuid.Parse(id); err != nil {
		u.NotFound(w, r)
		return models.Contact{}, false
	}
	c, err := u.Store.ContactGet(r.Context(), handlers.WorkspaceFrom(r).ID, id)
	if errors.Is(err, models.ErrNotFound) {
		u.NotFound(w, r)
		return c, false
	}
	if err != nil {
		u.serverError(w, r, err)
		return c, false
	}
	return c, true
}

// ShowContact renders a contact with its timeline and the operator's forms.
func (u *UI) ShowContact(w http.ResponseWriter, r *http.Request) {
	c, ok := u.loadUIContact(w, r)
	if !ok {
		return
	}
	u.contactPage(w, r, http.StatusOK, c, views.ContactForms{})
}

func (u *UI) contactPage(w http.ResponseWriter, r *http.Request, status int, c models.Contact, forms views.ContactForms) {
	ws := handlers.WorkspaceFrom(r)
	ctx := r.Context()
	rules, err := apply.LoadRules(ctx, u.Store, ws.ID)
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	x, err := u.Store.ContactExportAll(ctx, c)
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	sources, err := u.Store.SourceList(ctx, ws.ID)
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	names := map[int64]string{}
	for _, s := range sources {
		names[s.ID] = s.Name
	}
	v := views.ContactDetailView{Workspace: wsRef(ws), Contact: contactRow(c), Profile: contactProfile(c), Stages: stageOptions(rules),
		MergedInto: deref(c.MergedInto), Forms: forms, CanEdit: canEdit(r), IsAdmin: isAdmin(r), Now: u.now(), Tags: c.Tags}
	v.Fields, v.FieldNames = sortedKV(c.Fields), contactFieldNames(c)
	v.FirstTouch = sortedKV(c.FirstTouch)
	page, _ := strconv.Atoi(r.URL.Query().Get("page"))
	v.Timeline = timelinePage(contactTimeline(wsRef(ws), x, names), page)
	v.StagePath = stagePath(x.StageHistory)
	if isHTMX(r) && r.URL.Query().Has("page") {
		// The "older entries" button appends the next page in place.
		u.render(w, r, status, views.TimelineEntries(v))
		return
	}
	u.page(w, r, status, views.NavContacts, v.Contact.Label(), func(m views.PageMeta) templ.Component { return views.ContactPage(m, v) })
}

func contactProfile(c models.Contact) []views.KV {
	var out []views.KV
	add := func(k, v string) {
		if v != "" {
			out = append(out, views.KV{Key: k, Value: v})
		}
	}
	add("Email", deref(c.Email))
	phone := deref(c.Phone)
	if phone != "" && c.PhoneVerified {
		phone += " · verified"
	}
	if phone != "" && c.PhoneShared {
		phone += " · shared by several people"
	}
	add("Phone", phone)
	add("Company", deref(c.Company))
	add("Stage", c.Stage)
	if c.StageEnteredAt != nil {
		add("In stage since", c.StageEnteredAt.UTC().Format("2006-01-02 15:04 UTC"))
	}
	add("Score", scoreText(c.Score, c.ScoreBreakdown))
	add("Submissions", strconv.Itoa(c.SubmissionCount))
	add("First seen", c.FirstSeenAt.UTC().Format("2006-01-02 15:04 UTC"))
	add("Last activity", c.LastActivityAt.UTC().Format("2006-01-02 15:04 UTC"))
	add("Version", strconv.FormatInt(c.Version, 10))
	add("Contact id", c.ID)
	return out
}

func sortedKV(m map[string]string) []views.KV {
	out := make([]views.KV, 0, len(m))
	for k, v := range m {
		out = append(out, views.KV{Key: k, Value: v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// contactFieldNames suggests fields for a correction: the built-in ones and
// every custom field the contact has.
func contactFieldNames(c models.Contact) []string {
	names := []string{"first_name", "last_name", "company"}
	for k := range c.Fields {
		if !strings.Contains(strings.Join(names, ","), k) {
			names = append(names, k)
		}
	}
	sort.Strings(names[3:])
	return names
}

// isAdmin reports whether the signed-in role is admin.
func isAdmin(r *http.Request) bool {
	return roleAtLeast(r, models.RoleAdmin)
}

func roleAtLeast(r *http.Request, need string) bool {
	p, _ := principal.From(r.Context())
	return models.RoleAtLeast(p.Role, need)
}

// CorrectContact records a human correction of one field.
func (u *UI) CorrectContact(w http.ResponseWriter, r *http.Request) {
	c, ok := u.loadUIContact(w, r)
	if !ok {
		return
	}
	forms := views.ContactForms{Field: strings.TrimSpace(r.PostFormValue("field")), Value: strings.TrimSpace(r.PostFormValue("value"))}
	if forms.Field == "" {
		u.contactFormError(w, r, c, forms, "correct", "field", "Name the field to correct.")
		return
	}
	_, err := u.Applier.CorrectField(r.Context(), c.WorkspaceID, c.ID, forms.Field, forms.Value, handlers.Actor(r))
	if u.operatorFailed(w, r, c, forms, "correct", err) {
		return
	}
	u.flashRedirect(w, r, contactPath(r, c.ID), "ok", "Correction saved: "+forms.Field+" is now fixed by hand.")
}

// SetContactStageUI moves a contact to a stage by hand, with a reason.
func (u *UI) SetContactStageUI(w http.ResponseWriter, r *http.Request) {
	c, ok := u.loadUIContact(w, r)
	if !ok {
		return
	}
	forms := views.ContactForms{Stage: r.PostFormValue("stage"), Reason: strings.TrimSpace(r.PostFormValue("reason"))}
	if forms.Reason == "" {
		u.contactFormError(w, r, c, forms, "stage", "reason", "Say why the stage changes; it is kept in the stage history.")
		return
	}
	out, err := u.Applier.SetStage(r.Context(), c.WorkspaceID, c.ID, forms.Stage, forms.Reason, handlers.Actor(r))
	if u.operatorFailed(w, r, c, forms, "stage", err) {
		return
	}
	u.flashRedirect(w, r, contactPath(r, c.ID), "ok", "Stage changed to "+out.Stage+".")
}

// MergeContactUI folds another contact (by email, phone or id) into this one.
func (u *UI) MergeContactUI(w http.ResponseWriter, r *http.Request) {
	c, ok := u.loadUIContact(w, r)
	if !ok {
		return
	}
	forms := views.ContactForms{MergeWith: strings.TrimSpace(r.PostFormValue("merge_with"))}
	other, msg, err := u.findContact(r, c.WorkspaceID, forms.MergeWith)
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	if msg != "" {
		u.contactFormError(w, r, c, forms, "merge", "merge_with", msg)
		return
	}
	_, err = u.Applier.MergeContacts(r.Context(), c.WorkspaceID, c.ID, other.ID, handlers.Actor(r))
	if u.operatorFailed(w, r, c, forms, "merge", err) {
		return
	}
	u.flashRedirect(w, r, contactPath(r, c.ID), "ok", contactRow(other).Label()+" was merged into this contact.")
}

// findContact resolves what the operator typed (an id, an email or a phone
// number) to a live contact; msg explains a miss.
func (u *UI) findContact(r *http.Request, wsID int64, typed string) (models.Contact, string, error) {
	if typed == "" {
		return models.Contact{}, "Enter the other contact's email, phone number or id.", nil
	}
	var c models.Contact
	var err error
	switch {
	case uuid.Validate(typed) == nil:
		c, err = u.Store.ContactGet(r.Context(), wsID, typed)
	case strings.Contains(typed, "@"):
		e := normalize.Email(typed)
		if !e.Valid {
			return c, "That email is not valid: " + e.Problem + ".", nil
		}
		c, err = u.Store.ContactFindByEmail(r.Context(), wsID, e.Value)
	default:
		p := normalize.Phone(typed, "")
		if !p.Valid {
			return c, "Enter an email, a contact id or an international phone number (+1 415 …).", nil
		}
		c, err = u.Store.ContactFindByPhone(r.Context(), wsID, p.Value)
	}
	if errors.Is(err, models.ErrNotFound) || (err == nil && c.MergedInto != nil) {
		return c, "No contact in this workspace matches " + strconv.Quote(typed) + ".", nil
	}
	return c, "", err
}

// operatorFailed answers an operator action's error: the applier's own
// messages go inline on the form; it reports whether it answered.
func (u *UI) operatorFailed(w http.ResponseWriter, r *http.Request, c models.Contact, forms views.ContactForms, form string, err error) bool {
	var oe *apply.OperatorError
	switch {
	case err == nil:
		return false
	case errors.As(err, &oe):
		field := map[string]string{"correct": "field", "stage": "stage", "merge": "merge_with"}[form]
		if oe.Field == "reason" || oe.Field == "value" {
			field = oe.Field
		}
		if oe.Field == "id" {
			field = "form"
		}
		u.contactFormError(w, r, c, forms, form, field, oe.Message)
	case errors.As(err, new(*apply.BusyError)):
		u.contactFormError(w, r, c, forms, form, "form", "The contact is being updated right now; try again in a moment.")
	case errors.Is(err, models.ErrNotFound):
		u.NotFound(w, r)
	default:
		u.serverError(w, r, err)
	}
	return true
}

func (u *UI) contactFormError(w http.ResponseWriter, r *http.Request, c models.Contact, forms views.ContactForms, form, field, msg string) {
	forms.Errors = map[string]views.FieldErrors{form: {field: msg}}
	u.contactPage(w, r, http.StatusUnprocessableEntity, c, forms)
}

func contactPath(r *http.Request, id string) string {
	return "/w/" + handlers.WorkspaceFrom(r).Slug + "/contacts/" + id
}

// ExportContactUI downloads everything held about the contact as JSON, through the same audited action
// as the API's export.
func (u *UI) ExportContactUI(w http.ResponseWriter, r *http.Request) {
	c, ok := u.loadUIContact(w, r)
	if !ok {
		return
	}
	x, err := u.contactActions().Export(r.Context(), handlers.Actor(r), c)
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Disposition", `attachment; filename="contact-`+c.ID+`.json"`)
	handlers.WriteJSON(w, http.StatusOK, x)
}

// contactActions is the privacy actions over the UI's store and erase hooks, the same the API runs.
func (u *UI) contactActions() actions.Contacts {
	return actions.Contacts{Store: u.Store, EraseHooks: u.EraseHooks}
}

// EraseContactUI erases the contact's personal data (admin), once the
// operator typed "erase"; the erase action does the work and the audit, as for the API.
func (u *UI) EraseContactUI(w http.ResponseWriter, r *http.Request) {
	c, ok := u.loadUIContact(w, r)
	if !ok {
		return
	}
	forms := views.ContactForms{EraseTyped: strings.TrimSpace(r.PostFormValue("confirm")), EraseInCRM: r.PostFormValue("crm_delete") == "true"}
	if !strings.EqualFold(forms.EraseTyped, "erase") {
		u.contactFormError(w, r, c, forms, "erase", "confirm", `Type "erase" to confirm: this cannot be undone.`)
		return
	}
	// Any refusal is unexpected here: the contact was just read and the form checked.
	if _, err := u.contactActions().Erase(r.Context(), c.WorkspaceID, handlers.Actor(r), actions.EraseContact{ContactID: c.ID, CRMDelete: forms.EraseInCRM}); err != nil {
		u.serverError(w, r, fmt.Errorf("ui: erase contact: %w", err))
		return
	}
	u.flashRedirect(w, r, contactPath(r, c.ID), "ok", "The contact's personal data was erased.")
}

// scoreText shows the score with the lines it is the sum of, as the apply
// step stored them: "12 = form_submitted +5, company is set +7".
func scoreText(score int, breakdown json.RawMessage) string {
	var lines []lifecycle.ScoreLine
	if len(breakdown) == 0 || json.Unmarshal(breakdown, &lines) != nil || len(lines) == 0 {
		return strconv.Itoa(score)
	}
	parts := make([]string, 0, len(lines))
	for _, l := range lines {
		parts = append(parts, fmt.Sprintf("%s %+d", l.Key, l.Points))
	}
	return strconv.Itoa(score) + " = " + strings.Join(parts, ", ")
}
