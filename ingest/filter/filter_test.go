package filter_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/leadgate/leadgate/ingest/filter"
	"github.com/leadgate/leadgate/models"
)

func off() *bool { f := false; return &f }

func sampleEnv() filter.Env {
	ev := models.Event{EventType: "form_submitted", Channel: "web_form",
		Email: ptr("jane@acme.com"), Phone: ptr("+14155550134"), FirstName: ptr("Jane"), Company: ptr("Acme"),
		Fields:      json.RawMessage(`{"consent":true,"budget":"10k","score":7}`),
		Attribution: json.RawMessage(`{"utm_source":"ads"}`),
		Payload:     json.RawMessage(`{"data":{"test":false,"tags":["vip"]},"honeypot":""}`)}
	return filter.EnvFromEvent(ev, models.Source{Name: "Web form", Kind: "standard-webhooks"})
}

func ptr(s string) *string { return &s }

func TestEvaluate(t *testing.T) {
	cases := []struct {
		name     string
		rules    []filter.Rule
		env      func(e *filter.Env)
		wantDrop bool
		wantRule string
		wantTags []string
	}{
		{name: "no rules keep everything"},
		{name: "internal domain dropped",
			rules:    []filter.Rule{{Name: "internal", Expr: `email_domain == "acme.com"`, Action: "drop"}},
			wantDrop: true, wantRule: "internal"},
		{name: "missing consent dropped",
			rules: []filter.Rule{{Name: "consent", Expr: `fields.consent != true`, Action: "drop"}},
			env:   func(e *filter.Env) { delete(e.Fields, "consent") }, wantDrop: true, wantRule: "consent"},
		{name: "consent given kept",
			rules: []filter.Rule{{Name: "consent", Expr: `fields.consent != true`, Action: "drop"}}},
		{name: "raw payload test flag",
			rules:    []filter.Rule{{Name: "test submissions", Expr: `payload?.data?.test == true`, Action: "drop"}},
			env:      func(e *filter.Env) { e.Payload = map[string]any{"data": map[string]any{"test": true}} },
			wantDrop: true, wantRule: "test submissions"},
		{name: "tags accumulate before a drop and are deduplicated",
			rules: []filter.Rule{
				{Name: "vip", Expr: `"vip" in payload.data.tags`, Action: "tag", Tags: []string{"vip", "priority"}},
				{Name: "ads", Expr: `attribution.utm_source == "ads"`, Action: "tag", Tags: []string{"paid", "vip"}},
			},
			wantTags: []string{"vip", "priority", "paid"}},
		{name: "first matching drop wins",
			rules: []filter.Rule{
				{Name: "spam", Expr: `payload.honeypot != ""`, Action: "drop"},
				{Name: "everyone", Expr: `true`, Action: "drop"},
			},
			wantDrop: true, wantRule: "everyone"},
		{name: "disabled rule is skipped",
			rules: []filter.Rule{{Name: "everyone", Expr: `true`, Action: "drop", Enabled: off()}}},
		{name: "runtime error never drops",
			rules: []filter.Rule{{Name: "broken", Expr: `fields.nested.deeper == 1`, Action: "drop"}}},
		{name: "string helpers",
			rules:    []filter.Rule{{Name: "testers", Expr: `lower(first_name) in ["jane", "test"] && phone startsWith "+1"`, Action: "drop"}},
			wantDrop: true, wantRule: "testers"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			set, err := filter.Compile(tc.rules)
			if err != nil {
				t.Fatalf("compile: %v", err)
			}
			env := sampleEnv()
			if tc.env != nil {
				tc.env(&env)
			}
			v := filter.Evaluate(context.Background(), set, env)
			if v.Drop != tc.wantDrop || v.Rule != tc.wantRule || !slices.Equal(v.Tags, tc.wantTags) {
				t.Fatalf("verdict %+v, want drop=%v rule=%q tags=%v", v, tc.wantDrop, tc.wantRule, tc.wantTags)
			}
			if v.Drop && !strings.Contains(v.Reason(), tc.wantRule) {
				t.Fatalf("reason %q does not name the rule", v.Reason())
			}
		})
	}
}

func TestRuntimeErrorIsReported(t *testing.T) {
	set, err := filter.Compile([]filter.Rule{{Name: "broken", Expr: `fields.nested.deeper == 1`, Action: "drop"}})
	if err != nil {
		t.Fatal(err)
	}
	v := filter.Evaluate(context.Background(), set, sampleEnv())
	if v.Drop || len(v.Errors) != 1 || !strings.Contains(v.Errors[0], `"broken"`) {
		t.Fatalf("verdict %+v: want no drop and one error naming the rule", v)
	}
}

func TestCompileRejectsWithClearErrors(t *testing.T) {
	cases := []struct {
		name      string
		rules     []filter.Rule
		wantField string
		wantMsg   string
	}{
		{"malformed expression", []filter.Rule{{Name: "a", Expr: `email ==`, Action: "drop"}}, "rules[0].expr", "invalid expression"},
		{"unknown variable", []filter.Rule{{Name: "a", Expr: `emial == "x"`, Action: "drop"}}, "rules[0].expr", "unknown name emial"},
		{"not a boolean", []filter.Rule{{Name: "a", Expr: `email`, Action: "drop"}}, "rules[0].expr", "bool"},
		{"type mismatch", []filter.Rule{{Name: "a", Expr: `email + 1 > 2`, Action: "drop"}}, "rules[0].expr", "invalid expression"},
		{"empty expression", []filter.Rule{{Name: "a", Expr: "  ", Action: "drop"}}, "rules[0].expr", "empty"},
		{"bad action", []filter.Rule{{Name: "a", Expr: `true`, Action: "delete"}}, "rules[0].action", `"drop" or "tag"`},
		{"tag rule without tags", []filter.Rule{{Name: "a", Expr: `true`, Action: "tag"}}, "rules[0].tags", "at least one tag"},
		{"bad tag", []filter.Rule{{Name: "a", Expr: `true`, Action: "tag", Tags: []string{"no spaces"}}}, "rules[0].tags[0]", "tag"},
		{"duplicate names", []filter.Rule{{Name: "a", Expr: `true`, Action: "drop"}, {Name: "A", Expr: `false`, Action: "drop"}}, "rules[1].name", "already named"},
		{"second rule broken", []filter.Rule{{Name: "ok", Expr: `true`, Action: "drop"}, {Name: "bad", Expr: `(`, Action: "drop"}}, "rules[1].expr", "invalid expression"},
		{"too long", []filter.Rule{{Name: "a", Expr: strings.Repeat("true && ", 600) + "true", Action: "drop"}}, "rules[0].expr", "longer than"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := filter.Compile(tc.rules)
			var re *filter.RuleError
			if !errors.As(err, &re) {
				t.Fatalf("err %v, want a *RuleError", err)
			}
			if re.Field != tc.wantField || !strings.Contains(re.Message, tc.wantMsg) {
				t.Fatalf("field %q message %q; want field %q containing %q", re.Field, re.Message, tc.wantField, tc.wantMsg)
			}
		})
	}
}

// A set is empty, and ingest skips it, only when no rule is switched on: one enabled rule makes it count.
func TestASetIsEmptyOnlyWithoutAnEnabledRule(t *testing.T) {
	off := false
	var none *filter.Set
	cases := map[string]struct {
		rules []filter.Rule
		empty bool
	}{
		"no rules":        {nil, true},
		"every rule off":  {[]filter.Rule{{Name: "junk", Expr: `email endsWith "@test.com"`, Action: "drop", Enabled: &off}}, true},
		"one rule on":     {[]filter.Rule{{Name: "junk", Expr: `email endsWith "@test.com"`, Action: "drop"}}, false},
		"one on, one off": {[]filter.Rule{{Name: "a", Expr: `true`, Action: "drop", Enabled: &off}, {Name: "b", Expr: `true`, Action: "tag", Tags: []string{"x"}}}, false},
	}
	if !none.Empty() {
		t.Error("a missing set is not empty")
	}
	for name, tc := range cases {
		set, err := filter.Compile(tc.rules)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := set.Empty(); got != tc.empty {
			t.Errorf("%s: Empty() = %v, want %v", name, got, tc.empty)
		}
	}
}
