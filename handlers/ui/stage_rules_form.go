package ui

import (
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/leadgate/leadgate/lifecycle"
	"github.com/leadgate/leadgate/views"
)

// maxRuleRows caps the rows of each list one rules form may submit.
const maxRuleRows = 200

// policyOptions are the policy selects' choices, with what each does.
func policyOptions() views.PolicyOptions {
	return views.PolicyOptions{
		StateConflict: []views.Option{
			{Value: lifecycle.PolicyDeadLetter, Label: "Quarantine it as a dead letter for review"},
			{Value: lifecycle.PolicyApplyFieldsKeepStage, Label: "Apply its fields, keep the stage"},
			{Value: lifecycle.PolicyDrop, Label: "Drop it"},
		},
		LateEvent: []views.Option{
			{Value: lifecycle.PolicyApplyFieldsKeepStage, Label: "Apply its fields, keep the stage"},
			{Value: lifecycle.PolicyDeadLetter, Label: "Quarantine it as a dead letter for review"},
		},
		MissingField: []views.Option{
			{Value: lifecycle.PolicyTag, Label: "Enter the stage and tag the contact"},
			{Value: lifecycle.PolicyDeadLetter, Label: "Quarantine the event as a dead letter"},
		},
	}
}

// rulesForm lays rules out for the editor: ordered stages, then terminal ones.
func rulesForm(r lifecycle.Rules) views.RulesForm {
	f := views.RulesForm{BaseVersion: r.Version, AllowRegression: r.AllowRegression, AllowSkip: r.AllowSkip,
		OnStateConflict: orDefault(r.OnStateConflict, lifecycle.PolicyDeadLetter), OnLateEvent: orDefault(r.OnLateEvent, lifecycle.PolicyApplyFieldsKeepStage),
		OnMissingField: orDefault(r.OnMissingField, lifecycle.PolicyTag), MissingFieldTag: orDefault(r.MissingFieldTag, lifecycle.DefaultMissingFieldTag),
		RequiresContact: strings.Join(r.RequiresContact, ", "), SourcePrecedence: strings.Join(r.SourcePrecedence, ", "), Days: 7}
	stage := func(name string, terminal bool) views.StageEdit {
		return views.StageEdit{Name: name, Terminal: terminal, Required: strings.Join(r.RequiredFields[name], ", "),
			Phone: containsString(r.RequirePhoneVerification, name)}
	}
	for _, s := range r.Stages {
		f.Stages = append(f.Stages, stage(s, false))
	}
	for _, s := range r.Terminal {
		f.Stages = append(f.Stages, stage(s, true))
	}
	f.Aliases = pairsOf(r.Aliases)
	f.EventStages = pairsOf(r.EventStages)
	for _, m := range r.AllowedBackward {
		f.Backward = append(f.Backward, views.StageRow{Event: m.From, Stage: m.To})
	}
	return withBlankRows(f)
}

// withBlankRows gives every empty list one blank row to type into, so the
// editor works without the "Add a row" buttons (empty rows are ignored).
func withBlankRows(f views.RulesForm) views.RulesForm {
	for _, rows := range []*[]views.StageRow{&f.Aliases, &f.EventStages, &f.Backward} {
		if len(*rows) == 0 {
			*rows = []views.StageRow{{}}
		}
	}
	return f
}

func pairsOf(m map[string]string) []views.StageRow {
	rows := make([]views.StageRow, 0, len(m))
	for k, v := range m {
		rows = append(rows, views.StageRow{Event: k, Stage: v})
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].Event < rows[j].Event })
	return rows
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

func containsString(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// parseRulesForm reads the editor's draft as typed.
func parseRulesForm(r *http.Request) views.RulesForm {
	_ = r.ParseForm()
	pf := r.PostForm
	f := views.RulesForm{AllowRegression: pf.Get("allow_regression") == "true", AllowSkip: pf.Get("allow_skip") == "true",
		OnStateConflict: pf.Get("on_state_conflict"), OnLateEvent: pf.Get("on_late_event"), OnMissingField: pf.Get("on_missing_field"),
		MissingFieldTag: strings.TrimSpace(pf.Get("missing_field_tag")), RequiresContact: strings.TrimSpace(pf.Get("requires_contact")),
		SourcePrecedence: strings.TrimSpace(pf.Get("source_precedence")), NewStage: strings.TrimSpace(pf.Get("new_stage"))}
	f.BaseVersion, _ = strconv.Atoi(pf.Get("base_version"))
	f.Days, _ = strconv.Atoi(pf.Get("days"))
	checked := func(key string) map[int]bool {
		out := map[int]bool{}
		for _, v := range pf[key] {
			if i, err := strconv.Atoi(v); err == nil {
				out[i] = true
			}
		}
		return out
	}
	phone, terminal := checked("stage_phone"), checked("stage_terminal")
	names, required := pf["stage_name"], pf["stage_required"]
	for i := range min(len(names), maxRuleRows) {
		s := views.StageEdit{Name: strings.TrimSpace(names[i]), Phone: phone[i], Terminal: terminal[i]}
		if i < len(required) {
			s.Required = strings.TrimSpace(required[i])
		}
		f.Stages = append(f.Stages, s)
	}
	f.Stages = terminalLast(f.Stages)
	f.Aliases = formPairs(pf["alias_key"], pf["alias_stage"])
	f.EventStages = formPairs(pf["event_key"], pf["event_stage"])
	f.Backward = formPairs(pf["back_key"], pf["back_stage"])
	return f
}

// terminalLast keeps the ordered stages in their order and moves terminal ones after them.
func terminalLast(stages []views.StageEdit) []views.StageEdit {
	out := make([]views.StageEdit, 0, len(stages))
	for _, s := range stages {
		if !s.Terminal {
			out = append(out, s)
		}
	}
	for _, s := range stages {
		if s.Terminal {
			out = append(out, s)
		}
	}
	return out
}

// formPairs zips two repeated fields; blank rows stay (the editor shows
// them again) and are ignored when the rules are built.
func formPairs(keys, vals []string) []views.StageRow {
	var out []views.StageRow
	for i := range min(len(keys), maxRuleRows) {
		row := views.StageRow{Event: strings.TrimSpace(keys[i])}
		if i < len(vals) {
			row.Stage = strings.TrimSpace(vals[i])
		}
		out = append(out, row)
	}
	return out
}

// applyDraftOp carries out one editor button: move a stage, remove it, add
// a stage or a blank row. It reports a problem to show inline ("" if none).
func applyDraftOp(f *views.RulesForm, op string) (field, msg string) {
	verb, arg, _ := strings.Cut(op, ":")
	i, _ := strconv.Atoi(arg)
	inRange := i >= 0 && i < len(f.Stages)
	switch {
	case verb == "up" && inRange && i > 0 && !f.Stages[i].Terminal:
		f.Stages[i-1], f.Stages[i] = f.Stages[i], f.Stages[i-1]
	case verb == "down" && inRange && i+1 < len(f.Stages) && !f.Stages[i+1].Terminal:
		f.Stages[i+1], f.Stages[i] = f.Stages[i], f.Stages[i+1]
	case verb == "remove" && inRange:
		f.Stages = append(f.Stages[:i], f.Stages[i+1:]...)
	case verb == "add_stage":
		switch {
		case f.NewStage == "":
			return "stages", "Type the new stage's name first."
		case containsFoldStage(f.Stages, f.NewStage):
			return "stages", "There already is a stage named " + strconv.Quote(f.NewStage) + "."
		}
		ordered := 0
		for _, s := range f.Stages {
			if !s.Terminal {
				ordered++
			}
		}
		f.Stages = append(f.Stages[:ordered], append([]views.StageEdit{{Name: f.NewStage}}, f.Stages[ordered:]...)...)
		f.NewStage = ""
	case verb == "add_alias":
		f.Aliases = append(f.Aliases, views.StageRow{})
	case verb == "add_event":
		f.EventStages = append(f.EventStages, views.StageRow{})
	case verb == "add_back":
		f.Backward = append(f.Backward, views.StageRow{})
	}
	return "", ""
}

func containsFoldStage(stages []views.StageEdit, name string) bool {
	for _, s := range stages {
		if strings.EqualFold(s.Name, name) {
			return true
		}
	}
	return false
}

// rulesFromForm builds rules from the draft on top of base (which supplies
// what the editor does not show: the lead score and side effects). Problems
// the form can see itself come back keyed by input; the rest is left to
// lifecycle's Validate.
func rulesFromForm(base lifecycle.Rules, f views.RulesForm) (lifecycle.Rules, views.FieldErrors) {
	errs := views.FieldErrors{}
	r := base
	r.Version = 0
	r.Stages, r.Terminal = []string{}, []string{}
	r.RequiredFields, r.RequirePhoneVerification = map[string][]string{}, []string{}
	for _, s := range f.Stages {
		if s.Name == "" {
			errs["stages"] = "Every stage needs a name (remove the empty row)."
			continue
		}
		if s.Terminal {
			r.Terminal = append(r.Terminal, s.Name)
		} else {
			r.Stages = append(r.Stages, s.Name)
		}
		if req := splitList(s.Required); len(req) > 0 {
			r.RequiredFields[s.Name] = req
		}
		if s.Phone {
			r.RequirePhoneVerification = append(r.RequirePhoneVerification, s.Name)
		}
	}
	r.Aliases = pairMap(f.Aliases, "aliases", "alias", errs)
	r.EventStages = pairMap(f.EventStages, "event_stages", "event type", errs)
	r.AllowedBackward = []lifecycle.Move{}
	for _, row := range f.Backward {
		if row.Event == "" && row.Stage == "" {
			continue
		}
		if row.Event == "" || row.Stage == "" {
			errs["allowed_backward"] = "Each backward move needs both a from and a to stage."
			continue
		}
		r.AllowedBackward = append(r.AllowedBackward, lifecycle.Move{From: row.Event, To: row.Stage})
	}
	r.AllowRegression, r.AllowSkip = f.AllowRegression, f.AllowSkip
	r.OnStateConflict, r.OnLateEvent, r.OnMissingField = f.OnStateConflict, f.OnLateEvent, f.OnMissingField
	r.MissingFieldTag = f.MissingFieldTag
	r.RequiresContact = splitList(f.RequiresContact)
	r.SourcePrecedence = splitList(f.SourcePrecedence)
	if len(errs) == 0 {
		if err := r.Validate(); err != nil {
			key, msg := rulesErrorField(err)
			errs[key] = msg
		}
	}
	return r, errs
}

func pairMap(rows []views.StageRow, key, what string, errs views.FieldErrors) map[string]string {
	out := map[string]string{}
	for _, row := range rows {
		switch {
		case row.Event == "" && row.Stage == "":
		case row.Event == "" || row.Stage == "":
			errs[key] = "Each row needs both a " + what + " and a stage (clear both to remove it)."
		case out[row.Event] != "":
			errs[key] = "The " + what + " " + strconv.Quote(row.Event) + " appears twice."
		default:
			out[row.Event] = row.Stage
		}
	}
	return out
}

// splitList reads a comma-separated list, dropping blanks.
func splitList(s string) []string {
	out := []string{}
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// rulesErrorField maps a lifecycle validation error (or the API's field
// path) onto the editor input it concerns.
func rulesErrorField(err error) (string, string) {
	if ve, ok := err.(*lifecycle.ValidationError); ok {
		return rulesFieldKey(ve.Field), ve.Message
	}
	return "form", err.Error()
}

func rulesFieldKey(path string) string {
	head := path
	if i := strings.IndexAny(head, ".["); i >= 0 {
		head = head[:i]
	}
	switch head {
	case "stages", "terminal", "required_fields", "require_phone_verification":
		return "stages"
	case "aliases", "event_stages", "allowed_backward", "on_state_conflict", "on_late_event", "on_missing_field", "missing_field_tag", "source_precedence":
		return head
	case "requires_existing_contact":
		return "requires_contact"
	}
	return "form"
}
