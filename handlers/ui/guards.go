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

	"github.com/leadgate/leadgate/actions"
	"github.com/leadgate/leadgate/guards/alert"
	"github.com/leadgate/leadgate/handlers"
	"github.com/leadgate/leadgate/ingest/filter"
	"github.com/leadgate/leadgate/models"
	"github.com/leadgate/leadgate/views"
)

// guardForms carries what was typed into one of the guard page's forms and its errors.
type guardForms struct {
	loop    *views.LoopForm
	filters map[int64][]views.FilterRule
	alarm   views.SilenceForm
	channel views.ChannelForm
	// alerting and health hold what was typed into those forms (health: by metric).
	alerting *views.AlertingForm
	health   map[string]views.HealthAlarmRow
	errs     map[string]views.FieldErrors
	saved    map[string]string // per card: what was just saved, said in place
}

// ShowGuards renders the guards and alerts page.
func (u *UI) ShowGuards(w http.ResponseWriter, r *http.Request) {
	u.guardsPage(w, r, http.StatusOK, guardForms{})
}

func (u *UI) guardsPage(w http.ResponseWriter, r *http.Request, status int, f guardForms) {
	v, err := u.guardsView(r, f)
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	u.page(w, r, status, views.NavGuards, "Guards & alerts", func(m views.PageMeta) templ.Component { return views.GuardsPage(m, v) })
}

// guardsAnswer answers a guard form: an htmx save gets the card it edited,
// read again (the values and alarm state now in force), in place; a plain
// form gets the whole page.
func (u *UI) guardsAnswer(w http.ResponseWriter, r *http.Request, status int, f guardForms, card string) {
	if !isHTMX(r) || card == "" {
		if status == http.StatusOK {
			msg := ""
			for _, m := range f.saved {
				msg = m
			}
			u.flashRedirect(w, r, guardsPath(r), "ok", msg)
			return
		}
		u.guardsPage(w, r, status, f)
		return
	}
	v, err := u.guardsView(r, f)
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	m, err := u.meta(w, r, views.NavGuards, "Guards & alerts")
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	// htmx swaps only 2xx answers: a refused save is shown in place with its errors.
	w.Header().Set("HX-Trigger", "alarms-changed")
	u.render(w, r, http.StatusOK, views.GuardsCard(m, v, card))
}

// guardCardOf names the card a form belongs to.
func guardCardOf(form string) string {
	switch {
	case form == "loop":
		return "loop"
	case form == "silence" || strings.HasPrefix(form, "silence-"):
		return "silence"
	case strings.HasPrefix(form, "health-"):
		return "health"
	}
	return ""
}

func (u *UI) guardsView(r *http.Request, f guardForms) (views.GuardsView, error) {
	ws := handlers.WorkspaceFrom(r)
	ctx := r.Context()
	v := views.GuardsView{Workspace: wsRef(ws), Available: u.Guards != nil, CanEdit: canEdit(r), Now: u.now(), Errors: f.errs, Saved: f.saved,
		NewAlarm: f.alarm, NewChan: f.channel, Severity: []views.Option{{Value: alert.SeverityWarning, Label: "warning"},
			{Value: alert.SeverityCritical, Label: "critical"}, {Value: alert.SeverityInfo, Label: "info"}},
		Kinds: []views.Option{{Value: alert.KindSlack, Label: "Slack"}, {Value: alert.KindWebhook, Label: "Webhook"},
			{Value: alert.KindTelegram, Label: "Telegram"}, {Value: alert.KindPagerDuty, Label: "PagerDuty"}, {Value: alert.KindEmail, Label: "Email"}}}
	if !v.Available {
		return v, nil
	}
	settings, err := u.Store.GuardSettingsGet(ctx, ws.ID)
	if err != nil {
		return v, err
	}
	v.Loop = loopForm(settings.Loop)
	if f.loop != nil {
		v.Loop = *f.loop
	}
	v.Loop.Defaults = loopDefaults()
	v.CanAdmin = canAdmin(r)
	v.Alerting = views.AlertingForm{HeartbeatURL: settings.Alerting.HeartbeatURL, AllowedHosts: strings.Join(settings.Alerting.AllowedHosts, "\n")}
	if f.alerting != nil {
		v.Alerting = *f.alerting
	}
	if v.Health, err = u.healthRows(r, ws.ID, f.health); err != nil {
		return v, err
	}
	breakers, err := u.Store.BreakerList(ctx, ws.ID, models.BreakerTripped, models.Page{Limit: 50})
	if err != nil {
		return v, err
	}
	for _, b := range breakers {
		v.Breakers = append(v.Breakers, views.BreakerRow{ContactID: b.ContactID, Trips: b.Trips, Reason: b.Reason, TrippedAt: b.TrippedAt})
	}
	names, err := u.sourceOptions(r, ws.ID, &v.Sources)
	if err != nil {
		return v, err
	}
	for _, o := range v.Sources {
		id, _ := strconv.ParseInt(o.Value, 10, 64)
		rules, ok := f.filters[id]
		if !ok {
			if rules, err = u.filterRules(r, ws.ID, id); err != nil {
				return v, err
			}
		}
		v.Filters = append(v.Filters, views.SourceFilters{ID: id, Name: o.Label, Rules: append(rules, views.FilterRule{Action: filter.ActionDrop})})
	}
	alarms, err := u.Store.SilenceAlarmList(ctx, ws.ID)
	if err != nil {
		return v, err
	}
	for _, a := range alarms {
		scope := "the whole workspace"
		if a.SourceID != nil {
			scope = names[*a.SourceID]
		}
		v.Silence = append(v.Silence, views.SilenceRow{ID: a.ID, Scope: scope, Metric: a.Metric, Threshold: minutes(a.ThresholdSeconds),
			Reminder: minutes(a.ReminderSeconds), ThresholdMinutes: strconv.Itoa(a.ThresholdSeconds / 60), ReminderMinutes: strconv.Itoa(a.ReminderSeconds / 60), MinVolume: a.MinDailyVolume, Enabled: a.Enabled, Silent: a.Silent, SilentFrom: a.SilentSince})
	}
	channels, err := u.Store.AlertChannelList(ctx, ws.ID, false)
	if err != nil {
		return v, err
	}
	for _, c := range channels {
		cv := u.Guards.ChannelView(c)
		target := cv.Config.URL
		switch {
		case cv.Config.ChatID != "":
			target = "chat " + cv.Config.ChatID
		case len(cv.Config.To) > 0:
			target = strings.Join(cv.Config.To, ", ")
		}
		v.Channels = append(v.Channels, views.ChannelRow{ID: c.ID, Name: c.Name, Kind: c.Kind, MinSeverity: orDefault(c.MinSeverity, alert.SeverityWarning),
			Enabled: c.Enabled, Target: target, SecretsSet: strings.Join(cv.SecretsSet, ", "), LastTestAt: c.LastTestAt, LastTestErr: c.LastTestError})
	}
	return v, nil
}

func minutes(secs int) string {
	d := time.Duration(secs) * time.Second
	if d >= time.Hour && d%time.Hour == 0 {
		return strconv.Itoa(int(d.Hours())) + " h"
	}
	return strconv.Itoa(int(d.Minutes())) + " min"
}

// loopForm shows the loop settings in force: a value left to its default is
// shown as that default, never as an empty box with a stale example.
func loopForm(s models.LoopSettings) views.LoopForm {
	s = s.WithDefaults()
	num := strconv.Itoa
	return views.LoopForm{EchoDisabled: s.EchoDisabled, EchoWindow: num(s.EchoWindowSeconds), LoopField: s.LoopField, LoopValue: s.LoopValue,
		SyncField: s.SyncField, BreakerDisabled: s.BreakerDisabled, BreakerMax: num(s.BreakerMax), BreakerWindow: num(s.BreakerWindowSeconds)}
}

// loopDefaults are the loop settings' defaults, shown as each box's placeholder.
func loopDefaults() views.LoopDefaults {
	d := models.LoopSettings{}.WithDefaults()
	return views.LoopDefaults{EchoWindow: strconv.Itoa(d.EchoWindowSeconds), LoopField: d.LoopField, LoopValue: d.LoopValue, SyncField: d.SyncField,
		BreakerMax: strconv.Itoa(d.BreakerMax), BreakerWindow: strconv.Itoa(d.BreakerWindowSeconds)}
}

func (u *UI) filterRules(r *http.Request, wsID, sourceID int64) ([]views.FilterRule, error) {
	f, err := u.Store.SourceFilterGet(r.Context(), wsID, sourceID)
	if errors.Is(err, models.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	rules, _ := filter.ParseRules(f.Rules)
	out := make([]views.FilterRule, 0, len(rules))
	for _, rule := range rules {
		out = append(out, views.FilterRule{Name: rule.Name, Expr: rule.Expr, Action: rule.Action})
	}
	return out, nil
}

// guardFailed re-renders the page with an action's refusal inline on form
// (its field mapped by fieldOf), or answers a server error; it reports
// whether err was a failure. A missing subject other than a breaker is a
// server error: the page loaded it before it showed the form.
func (u *UI) guardFailed(w http.ResponseWriter, r *http.Request, err error, f guardForms, form string, fieldOf func(string) string) bool {
	if err == nil {
		return false
	}
	field, msg, ok := guardRefusal(err)
	var missing *actions.NotFoundError
	if !ok || errors.As(err, &missing) && missing.Field != "" && missing.Field != "contact" {
		u.serverError(w, r, fmt.Errorf("ui: guards %s: %w", form, err))
		return true
	}
	f.errs = map[string]views.FieldErrors{form: {fieldOf(field): capitalize(msg)}}
	u.guardsAnswer(w, r, http.StatusUnprocessableEntity, f, guardCardOf(form))
	return true
}

// guardRefusal is the field and message of an action's error the operator
// can act upon (a refused input, a conflict, a missing subject); ok is false
// for a failure on the server's side or a remote's.
func guardRefusal(err error) (field, msg string, ok bool) {
	var invalid *actions.FieldError
	var conflict *actions.ConflictError
	var missing *actions.NotFoundError
	switch {
	case errors.As(err, &invalid):
		return invalid.Field, invalid.Message, true
	case errors.As(err, &conflict):
		return conflict.Field, conflict.Message, true
	case errors.As(err, &missing):
		return missing.Field, missing.Message, true
	}
	return "", "", false
}

func guardsPath(r *http.Request) string { return "/w/" + handlers.WorkspaceFrom(r).Slug + "/guards" }

// SaveLoopSettings saves the loop breaker.
func (u *UI) SaveLoopSettings(w http.ResponseWriter, r *http.Request) {
	cur, err := u.Store.GuardSettingsGet(r.Context(), handlers.WorkspaceFrom(r).ID)
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	form := views.LoopForm{EchoDisabled: r.PostFormValue("echo_disabled") == "true", EchoWindow: strings.TrimSpace(r.PostFormValue("echo_window_seconds")),
		LoopField: strings.TrimSpace(r.PostFormValue("loop_field")), LoopValue: strings.TrimSpace(r.PostFormValue("loop_value")),
		SyncField: strings.TrimSpace(r.PostFormValue("sync_field")), BreakerDisabled: r.PostFormValue("breaker_disabled") == "true",
		BreakerMax: strings.TrimSpace(r.PostFormValue("breaker_max")), BreakerWindow: strings.TrimSpace(r.PostFormValue("breaker_window_seconds"))}
	in := cur.Loop // keeps what the form does not show (HubSpot own source ids)
	in.EchoDisabled, in.LoopField, in.LoopValue, in.SyncField, in.BreakerDisabled = form.EchoDisabled, form.LoopField, form.LoopValue, form.SyncField, form.BreakerDisabled
	errs := views.FieldErrors{}
	for _, n := range []struct {
		name, raw string
		dst       *int
	}{{"echo_window_seconds", form.EchoWindow, &in.EchoWindowSeconds}, {"breaker_max", form.BreakerMax, &in.BreakerMax},
		{"breaker_window_seconds", form.BreakerWindow, &in.BreakerWindowSeconds}} {
		*n.dst = 0
		if n.raw == "" {
			continue
		}
		v, err := strconv.Atoi(n.raw)
		if err != nil || v < 0 {
			errs[n.name] = "Enter a whole number (empty for the default)."
			continue
		}
		*n.dst = v
	}
	f := guardForms{loop: &form}
	if errs.Any() {
		f.errs = map[string]views.FieldErrors{"loop": errs}
		u.guardsAnswer(w, r, http.StatusUnprocessableEntity, f, "loop")
		return
	}
	_, err = u.Guards.PutLoopSettings(r.Context(), handlers.WorkspaceFrom(r), handlers.Actor(r), in)
	if u.guardFailed(w, r, err, f, "loop", func(s string) string { return orDefault(s, "form") }) {
		return
	}
	u.guardsAnswer(w, r, http.StatusOK, guardForms{saved: map[string]string{"loop": "Loop breaker settings saved."}}, "loop")
}

// ResetBreakerUI closes a contact's tripped circuit breaker.
func (u *UI) ResetBreakerUI(w http.ResponseWriter, r *http.Request) {
	_, err := u.Guards.ResetBreaker(r.Context(), handlers.WorkspaceFrom(r), handlers.Actor(r), chi.URLParam(r, "contact"))
	if err == nil {
		u.flashRedirect(w, r, guardsPath(r), "ok", "Circuit breaker reset: the contact's events flow again. Its held dead letters wait for you.")
		return
	}
	if _, msg, ok := guardRefusal(err); ok {
		u.flashRedirect(w, r, guardsPath(r), "error", capitalize(msg))
		return
	}
	u.serverError(w, r, fmt.Errorf("ui: reset breaker: %w", err))
}

// SaveSourceFilters replaces a source's filter rules after compiling them.
func (u *UI) SaveSourceFilters(w http.ResponseWriter, r *http.Request) {
	src, ok := u.loadSource(w, r)
	if !ok {
		return
	}
	_ = r.ParseForm()
	names, exprs, kinds := r.PostForm["rule_name"], r.PostForm["rule_expr"], r.PostForm["rule_action"]
	var typed []views.FilterRule
	rules := []filter.Rule{}
	for i := range min(len(exprs), maxRuleRows) {
		rule := views.FilterRule{Expr: strings.TrimSpace(exprs[i]), Action: filter.ActionDrop}
		if i < len(names) {
			rule.Name = strings.TrimSpace(names[i])
		}
		if i < len(kinds) {
			rule.Action = kinds[i]
		}
		if rule.Expr == "" {
			continue
		}
		if rule.Name == "" {
			rule.Name = "rule " + strconv.Itoa(len(rules)+1)
		}
		typed = append(typed, rule)
		rules = append(rules, filter.Rule{Name: rule.Name, Expr: rule.Expr, Action: rule.Action})
	}
	f := guardForms{filters: map[int64][]views.FilterRule{src.ID: typed}}
	_, err := u.Guards.PutSourceFilters(r.Context(), handlers.Actor(r), src, rules)
	key := "filters-" + strconv.FormatInt(src.ID, 10)
	if u.guardFailed(w, r, err, f, key, func(string) string { return "form" }) {
		return
	}
	u.flashRedirect(w, r, guardsPath(r), "ok", "Filters of "+src.Name+" saved ("+strconv.Itoa(len(rules))+" rule(s)).")
}

// CreateSilenceAlarmUI adds a silence alarm.
func (u *UI) CreateSilenceAlarmUI(w http.ResponseWriter, r *http.Request) {
	form := views.SilenceForm{SourceID: r.PostFormValue("source_id"), Metric: r.PostFormValue("metric"), Rule: r.PostFormValue("rule"),
		ThresholdMinutes: strings.TrimSpace(r.PostFormValue("threshold_minutes")), ReminderMinutes: strings.TrimSpace(r.PostFormValue("reminder_minutes"))}
	in := actions.SilenceInput{Metric: form.Metric}
	if form.Rule != "" && form.Metric != models.SilenceCRMWrite {
		in.Rule = form.Rule
	}
	errs := views.FieldErrors{}
	if form.SourceID != "" {
		id, err := strconv.ParseInt(form.SourceID, 10, 64)
		if err != nil {
			errs["source_id"] = "Pick a source or the whole workspace."
		}
		in.SourceID = &id
	}
	for _, n := range []struct {
		key, raw string
		dst      *int
	}{{"threshold_minutes", form.ThresholdMinutes, &in.ThresholdSeconds}, {"reminder_minutes", form.ReminderMinutes, &in.ReminderSeconds}} {
		if n.raw == "" {
			continue
		}
		v, err := strconv.Atoi(n.raw)
		if err != nil || v < 1 {
			errs[n.key] = "Enter a whole number of minutes."
			continue
		}
		*n.dst = v * 60
	}
	f := guardForms{alarm: form}
	if errs.Any() {
		f.errs = map[string]views.FieldErrors{"silence": errs}
		u.guardsPage(w, r, http.StatusUnprocessableEntity, f)
		return
	}
	_, err := u.Guards.CreateSilenceAlarm(r.Context(), handlers.WorkspaceFrom(r), handlers.Actor(r), in)
	if u.guardFailed(w, r, err, f, "silence", func(s string) string {
		switch s {
		case "source_id", "metric", "rule":
			return s
		case "threshold_seconds":
			return "threshold_minutes"
		case "reminder_seconds":
			return "reminder_minutes"
		}
		return "form"
	}) {
		return
	}
	u.flashRedirect(w, r, guardsPath(r), "ok", "Silence alarm added.")
}

// UpdateSilenceAlarmUI edits a silence alarm's threshold, reminder and
// switch in place (the rest of its configuration is kept).
func (u *UI) UpdateSilenceAlarmUI(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.ParseInt(chi.URLParam(r, "id"), 10, 64)
	if err != nil {
		u.NotFound(w, r)
		return
	}
	cur, err := u.Store.SilenceAlarmGet(r.Context(), handlers.WorkspaceFrom(r).ID, id)
	if errors.Is(err, models.ErrNotFound) {
		u.NotFound(w, r)
		return
	}
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	key := "silence-" + strconv.FormatInt(id, 10)
	enabled := r.PostFormValue("enabled") == "true"
	in := actions.SilenceInput{SourceID: cur.SourceID, Metric: cur.Metric, Rule: cur.Rule, ThresholdSeconds: cur.ThresholdSeconds,
		ReminderSeconds: cur.ReminderSeconds, MinDailyVolume: cur.MinDailyVolume, Enabled: &enabled}
	errs := views.FieldErrors{}
	for _, n := range []struct {
		form string
		dst  *int
	}{{"threshold_minutes", &in.ThresholdSeconds}, {"reminder_minutes", &in.ReminderSeconds}} {
		raw := strings.TrimSpace(r.PostFormValue(n.form))
		if raw == "" {
			continue
		}
		v, err := strconv.Atoi(raw)
		if err != nil || v < 1 {
			errs[n.form] = "Enter a whole number of minutes."
			continue
		}
		*n.dst = v * 60
	}
	if errs.Any() {
		u.guardsAnswer(w, r, http.StatusUnprocessableEntity, guardForms{errs: map[string]views.FieldErrors{key: errs}}, "silence")
		return
	}
	if len(cur.BusinessHours) > 0 {
		if err := json.Unmarshal(cur.BusinessHours, &in.BusinessHours); err != nil {
			u.serverError(w, r, fmt.Errorf("ui: read the business hours of silence alarm %d: %w", id, err))
			return
		}
	}
	_, err = u.Guards.UpdateSilenceAlarm(r.Context(), handlers.WorkspaceFrom(r), handlers.Actor(r), id, in)
	if u.guardFailed(w, r, err, guardForms{}, key, func(s string) string { return orDefault(strings.Replace(s, "_seconds", "_minutes", 1), "form") }) {
		return
	}
	u.guardsAnswer(w, r, http.StatusOK, guardForms{saved: map[string]string{key: "Silence alarm saved."}}, "silence")
}

// DeleteSilenceAlarmUI removes a silence alarm.
func (u *UI) DeleteSilenceAlarmUI(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.ParseInt(chi.URLParam(r, "id"), 10, 64)
	if err != nil {
		u.NotFound(w, r)
		return
	}
	err = u.Guards.DeleteSilenceAlarm(r.Context(), handlers.WorkspaceFrom(r), handlers.Actor(r), id)
	switch {
	case err == nil:
		u.flashRedirect(w, r, guardsPath(r), "ok", "Silence alarm deleted.")
	case errors.Is(err, actions.ErrNotFound):
		u.NotFound(w, r)
	default:
		u.serverError(w, r, fmt.Errorf("ui: delete silence alarm: %w", err))
	}
}

// CreateAlertChannelUI adds an alert channel; the one secret field goes
// where the chosen kind keeps its secret.
func (u *UI) CreateAlertChannelUI(w http.ResponseWriter, r *http.Request) {
	form := views.ChannelForm{Name: strings.TrimSpace(r.PostFormValue("name")), Kind: r.PostFormValue("kind"), MinSeverity: r.PostFormValue("min_severity"),
		URL: strings.TrimSpace(r.PostFormValue("url")), ChatID: strings.TrimSpace(r.PostFormValue("chat_id")),
		SMTPHost: strings.TrimSpace(r.PostFormValue("smtp_host")), Username: strings.TrimSpace(r.PostFormValue("username")),
		From: strings.TrimSpace(r.PostFormValue("from")), To: strings.TrimSpace(r.PostFormValue("to"))}
	secret := strings.TrimSpace(r.PostFormValue("secret"))
	cfg := alert.Config{ChatID: form.ChatID, SMTPHost: form.SMTPHost, Username: form.Username, From: form.From}
	var sec alert.Secrets
	switch form.Kind {
	case alert.KindSlack:
		sec.WebhookURL = secret
	case alert.KindWebhook:
		cfg.URL, sec.SigningSecret = form.URL, secret
	case alert.KindTelegram:
		sec.BotToken = secret
	case alert.KindPagerDuty:
		sec.RoutingKey = secret
	case alert.KindEmail:
		sec.Password = secret
		cfg.To = splitList(form.To)
	}
	in := actions.ChannelInput{Name: form.Name, Kind: form.Kind, MinSeverity: form.MinSeverity, Config: cfg, Secrets: sec}
	_, err := u.Guards.CreateAlertChannel(r.Context(), handlers.WorkspaceFrom(r), handlers.Actor(r), in)
	if u.guardFailed(w, r, err, guardForms{channel: form}, "channel", channelField) {
		return
	}
	u.flashRedirect(w, r, guardsPath(r), "ok", "Alert channel "+form.Name+" added. Send a test to check it.")
}

// channelField maps the API's field path onto the channel form's inputs.
func channelField(f string) string {
	head, _, _ := strings.Cut(f, "[")
	switch head {
	case "name", "kind", "min_severity":
		return head
	case "config.url":
		return "url"
	case "config.chat_id":
		return "chat_id"
	case "config.smtp_host":
		return "smtp_host"
	case "config.to":
		return "to"
	case "config.from":
		return "from"
	case "config.username":
		return "username"
	}
	if strings.HasPrefix(head, "secrets.") {
		return "secret"
	}
	return "form"
}

// TestAlertChannelUI sends a test alert and says how it went.
func (u *UI) TestAlertChannelUI(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.ParseInt(chi.URLParam(r, "id"), 10, 64)
	if err != nil {
		u.NotFound(w, r)
		return
	}
	err = u.Guards.TestAlertChannel(r.Context(), handlers.WorkspaceFrom(r), id)
	var failed *actions.UpstreamError
	switch {
	case err == nil:
		u.flashRedirect(w, r, guardsPath(r), "ok", "Test alert sent.")
	case errors.Is(err, actions.ErrNotFound):
		u.NotFound(w, r)
	case errors.As(err, &failed):
		u.flashRedirect(w, r, guardsPath(r), "error", "The test alert failed: "+failed.Message)
	default:
		u.serverError(w, r, fmt.Errorf("ui: test alert channel: %w", err))
	}
}

// DeleteAlertChannelUI removes an alert channel.
func (u *UI) DeleteAlertChannelUI(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.ParseInt(chi.URLParam(r, "id"), 10, 64)
	if err != nil {
		u.NotFound(w, r)
		return
	}
	err = u.Guards.DeleteAlertChannel(r.Context(), handlers.WorkspaceFrom(r), handlers.Actor(r), id)
	switch {
	case err == nil:
		u.flashRedirect(w, r, guardsPath(r), "ok", "Alert channel deleted.")
	case errors.Is(err, actions.ErrNotFound):
		u.NotFound(w, r)
	default:
		u.serverError(w, r, fmt.Errorf("ui: delete alert channel: %w", err))
	}
}
