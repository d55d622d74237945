package ui_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/leadgate/leadgate/handlers/handlerstest"
	"github.com/leadgate/leadgate/lifecycle/apply"
	"github.com/leadgate/leadgate/models"
)

// defaultRulesForm is the editor's form for the default rules, as a browser posts it.
func defaultRulesForm() url.Values {
	return url.Values{
		"base_version":      {"0"},
		"stage_name":        {"Discovered", "Engaged", "SQL", "Closed", "Lost"},
		"stage_required":    {"", "", "", "", ""},
		"stage_terminal":    {"4"},
		"allow_skip":        {"true"},
		"on_state_conflict": {"dead_letter"},
		"on_late_event":     {"apply_fields_keep_stage"},
		"on_missing_field":  {"tag"},
		"missing_field_tag": {"needs-data"},
		"days":              {"7"},
	}
}

func with(v url.Values, kv ...string) url.Values {
	out := url.Values{}
	for k, vs := range v {
		out[k] = append([]string(nil), vs...)
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out.Set(kv[i], kv[i+1])
	}
	return out
}

// withStages is the default form with other stage names (the last one terminal).
func withStages(names ...string) url.Values {
	f := defaultRulesForm()
	f["stage_name"] = names
	f["stage_required"] = make([]string, len(names))
	f["stage_terminal"] = []string{strconv.Itoa(len(names) - 1)}
	return f
}

// stageOrder reads the stage names in the order the editor shows them.
func stageOrder(body string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`name="stage_name" value="([^"]*)"`).FindAllStringSubmatch(body, -1) {
		out = append(out, m[1])
	}
	return out
}

func TestUIStageRulesDraftOperations(t *testing.T) {
	t.Parallel()
	e := handlerstest.NewEnv(t)
	c := e.SignedIn(models.RoleEditor)
	page := c.Get("/w/default/stages")
	handlerstest.ExpectStatus(t, "editor", page, http.StatusOK)
	handlerstest.ExpectBody(t, "editor", page, `data-testid="rules-editor"`, "defaults, never saved", `hx-post="/w/default/stages/draft"`)
	if got := strings.Join(stageOrder(page.Body), ","); got != "Discovered,Engaged,SQL,Closed,Lost" {
		t.Fatalf("default stages in the editor: %s", got)
	}

	cases := []struct {
		name, op, newStage, want string
	}{
		{"move SQL up", "up:2", "", "Discovered,SQL,Engaged,Closed,Lost"},
		{"move Discovered down", "down:0", "", "Engaged,Discovered,SQL,Closed,Lost"},
		{"the first stage cannot go up", "up:0", "", "Discovered,Engaged,SQL,Closed,Lost"},
		{"an ordered stage cannot sink below a terminal one", "down:3", "", "Discovered,Engaged,SQL,Closed,Lost"},
		{"remove Engaged", "remove:1", "", "Discovered,SQL,Closed,Lost"},
		{"add a stage before the terminal ones", "add_stage", "Proposal", "Discovered,Engaged,SQL,Closed,Proposal,Lost"},
	}
	for _, tc := range cases {
		res := c.Post("/w/default/stages/draft", with(defaultRulesForm(), "op", tc.op, "new_stage", tc.newStage))
		handlerstest.ExpectStatus(t, tc.name, res, http.StatusOK)
		if got := strings.Join(stageOrder(res.Body), ","); got != tc.want {
			t.Fatalf("%s: stages %s, want %s", tc.name, got, tc.want)
		}
	}
	alias := c.Post("/w/default/stages/draft", with(defaultRulesForm(), "op", "add_alias"))
	if n := strings.Count(alias.Body, `name="alias_key"`); n != 1 {
		t.Fatalf("add_alias: %d alias rows, want 1", n)
	}
	frag := c.PostHTMX("/w/default/stages/draft", with(defaultRulesForm(), "op", "up:1"))
	handlerstest.ExpectStatus(t, "htmx draft", frag, http.StatusOK)
	if strings.Contains(frag.Body, "<html") || !strings.HasPrefix(strings.TrimSpace(frag.Body), `<form method="post" action="/w/default/stages" id="rules-editor"`) {
		t.Fatalf("htmx draft is not the editor fragment: %.200s", frag.Body)
	}
	if !strings.Contains(frag.Body, `id="up-discovered"`) {
		t.Fatal("move buttons lack the stable ids that keep focus on the moved stage")
	}
	dup := c.Post("/w/default/stages/draft", with(defaultRulesForm(), "op", "add_stage", "new_stage", "sql"))
	handlerstest.ExpectBody(t, "duplicate new stage", dup, `id="err-stages"`, "already is a stage")
}

func TestUIStageRulesPreviewAndSave(t *testing.T) {
	t.Parallel()
	e := handlerstest.NewEnv(t)
	ctx := context.Background()
	src := e.SeedSource("Web form")
	e.Conflict(src, "ann@example.com") // SQL, then a newer Discovered: quarantined today
	c := e.SignedIn(models.RoleEditor)
	c.Get("/w/default/stages")

	// Allowing regression would apply the quarantined event: the preview says Ann ends in Discovered.
	draft := with(defaultRulesForm(), "allow_regression", "true")
	res := c.PostHTMX("/w/default/stages/dry-run", draft)
	handlerstest.ExpectStatus(t, "preview", res, http.StatusOK)
	handlerstest.ExpectBody(t, "preview", res, `data-testid="dry-run-report"`, `data-testid="dry-run-changes"`, "ann@example.com")
	if strings.Contains(res.Body, "<html") {
		t.Fatal("preview is not a fragment")
	}
	same := c.PostHTMX("/w/default/stages/dry-run", defaultRulesForm())
	handlerstest.ExpectBody(t, "preview of the rules in force", same, `data-testid="dry-run-no-changes"`, "state_conflict",
		"Newsletter signup would move SQL back to Discovered; moving back is off, so it goes to dead letters")
	bad := c.PostHTMX("/w/default/stages/dry-run", with(defaultRulesForm(), "on_state_conflict", "explode"))
	handlerstest.ExpectStatus(t, "invalid preview", bad, http.StatusOK)
	handlerstest.ExpectBody(t, "invalid preview", bad, `data-testid="dry-run-errors"`)
	if _, err := e.Store.StageRulesCurrent(ctx, e.WS.ID); err != models.ErrNotFound {
		t.Fatalf("a preview saved rules: %v", err)
	}

	invalid := []struct {
		name  string
		form  url.Values
		field string
	}{
		{"duplicate stage", withStages("Discovered", "SQL", "sql", "Closed", "Lost"), "stages"},
		{"empty stage name", withStages("Discovered", "", "SQL", "Closed", "Lost"), "stages"},
		{"unknown policy", with(defaultRulesForm(), "on_state_conflict", "explode"), "on_state_conflict"},
		{"alias to an unknown stage", with(defaultRulesForm(), "alias_key", "MQL", "alias_stage", "Moon"), "aliases"},
		{"half an event row", with(defaultRulesForm(), "event_key", "call_booked"), "event_stages"},
	}
	before := len(e.AuditActions())
	for _, tc := range invalid {
		res := c.Post("/w/default/stages", tc.form)
		handlerstest.ExpectStatus(t, tc.name, res, http.StatusUnprocessableEntity)
		handlerstest.ExpectBody(t, tc.name, res, `id="err-`+tc.field+`"`)
	}
	if n := len(e.AuditActions()); n != before {
		t.Fatalf("rejected saves wrote %d audit entries", n-before)
	}

	form := with(draft, "alias_key", "MQL", "alias_stage", "Engaged", "event_key", "call_booked", "event_stage", "SQL",
		"requires_contact", "payment_succeeded, call_completed")
	form["stage_required"] = []string{"", "", "company", "", ""}
	form["stage_phone"] = []string{"2"}
	handlerstest.ExpectRedirect(t, "save", c.Post("/w/default/stages", form), "/w/default/stages")
	handlerstest.RequireAudit(t, e, "stage_rules.update")
	rules, err := apply.LoadRules(ctx, e.Store, e.WS.ID)
	if err != nil {
		t.Fatal(err)
	}
	if rules.Version != 1 || !rules.AllowRegression || rules.Aliases["MQL"] != "Engaged" || rules.EventStages["call_booked"] != "SQL" ||
		strings.Join(rules.RequiredFields["SQL"], ",") != "company" || strings.Join(rules.RequirePhoneVerification, ",") != "SQL" ||
		len(rules.RequiresContact) != 2 || strings.Join(rules.Terminal, ",") != "Lost" {
		t.Fatalf("saved rules: %+v", rules)
	}
	page := c.Get("/w/default/stages")
	handlerstest.ExpectBody(t, "after save", page, "version 1 in force", `data-testid="rules-versions"`, "Stage rules saved as version 1")

	// A draft opened on the defaults cannot silently overwrite version 1.
	res = c.Post("/w/default/stages", defaultRulesForm())
	handlerstest.ExpectStatus(t, "stale draft", res, http.StatusUnprocessableEntity)
	handlerstest.ExpectBody(t, "stale draft", res, "Someone saved version 1 while you were editing")

	handlerstest.ExpectRedirect(t, "save v2", c.Post("/w/default/stages", with(defaultRulesForm(), "base_version", "1")), "/w/default/stages")
	versions := c.Get("/w/default/stages/versions/1")
	handlerstest.ExpectBody(t, "version page", versions, `data-testid="rules-json"`, "&#34;MQL&#34;: &#34;Engaged&#34;", "Load into editor")
	// Each version shows what it changed: v1 against the defaults, v2 (the defaults again) against v1.
	handlerstest.ExpectBody(t, "v1 diff", versions, `data-testid="rules-diff"`, "Changes from the defaults", `class="diff-added"`, "MQL</code>")
	v2 := c.Get("/w/default/stages/versions/2")
	_, diff, _ := strings.Cut(v2.Body, `data-testid="rules-diff"`)
	diff, _, _ = strings.Cut(diff, `data-testid="rules-json"`)
	handlerstest.ExpectBody(t, "v2 diff", handlerstest.Response{Body: diff}, "Changes from v1", `<tr class="diff-removed"><td><code>aliases.MQL</code></td><td class="diff-before">&#34;Engaged&#34;</td><td class="diff-after">–</td>`)
	restore := c.Get("/w/default/stages?from=1")
	handlerstest.ExpectBody(t, "restore", restore, "Version 1 is loaded into the editor", `name="alias_key" value="MQL"`, `name="base_version" value="2"`)
	handlerstest.ExpectStatus(t, "unknown version", c.Get("/w/default/stages/versions/9"), http.StatusNotFound)

	// Per-source mapping, saved from the editor.
	mp := "/w/default/stages/sources/" + strconv.FormatInt(src.ID, 10)
	handlerstest.ExpectRedirect(t, "source mapping", c.Post(mp, url.Values{"stage_event": {"form_submitted", ""}, "stage_name": {"Engaged", ""}}), "/w/default/stages")
	handlerstest.RequireAudit(t, e, "source.update")
	if got, _ := e.Store.SourceGet(ctx, e.WS.ID, src.ID); got.Config.EventStages["form_submitted"] != "Engaged" {
		t.Fatalf("source mapping not saved: %+v", got.Config)
	}
	handlerstest.ExpectRedirect(t, "bad source mapping", c.Post(mp, url.Values{"stage_event": {"x"}, "stage_name": {""}}), "/w/default/stages")
	handlerstest.ExpectBody(t, "bad source mapping", c.Get("/w/default/stages"), "Each mapping row needs both")
}
