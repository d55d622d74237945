//go:build proof

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/leadgate/leadgate/models"
)

// signIn opens a browser signed in as a new admin.
func signIn(t *testing.T, st *stack) *browser {
	t.Helper()
	if _, err := st.store.UserCreate(context.Background(), adminEmail, adminPassword, models.RoleAdmin, false); err != nil {
		t.Fatal(err)
	}
	b := newBrowser(t, st.url)
	b.open("/login", `input[name=email]`)
	b.do("sign in",
		chromedp.SetValue(chromedp.CSS(`input[name=email]`), adminEmail),
		chromedp.SetValue(chromedp.CSS(`input[name=password]`), adminPassword),
		chromedp.Click(chromedp.CSS(`button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=health-panel]`)),
	)
	return b
}

// newSource creates a source in the browser and returns its signed sender.
func newSource(t *testing.T, b *browser) *sender {
	t.Helper()
	b.open("/w/default/sources/new", `[data-testid=source-form]`)
	b.do("create source",
		chromedp.SetValue(chromedp.CSS(`input[name=name]`), "Website form"),
		chromedp.SetValue(chromedp.CSS(`input[name=channel]`), "web_form"),
		chromedp.SetValue(chromedp.CSS(`input[name=default_region]`), "US"),
		chromedp.Click(chromedp.CSS(`[data-testid=source-form] button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=secret]`)),
	)
	return &sender{t: t, url: b.text(`[data-testid=ingest-url]`), secret: b.text(`[data-testid=secret]`)}
}

func (b *browser) value(sel string) string {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Value(chromedp.CSS(sel)))
	if err != nil {
		b.t.Fatalf("value of %s: %v", sel, err)
	}
	return v
}

// TestDeadLetterGroupsInBrowser: a looping contact yields one grouped dead
// letter with its count, reset-then-replay clears it; "act on all" handles
// 500 dead letters with one audit entry.
func TestDeadLetterGroupsInBrowser(t *testing.T) {
	st := newStack(t)
	ctx := context.Background()
	b := signIn(t, st)
	defer b.checkConsole()

	t.Run("a loop yields one grouped dead letter with its count", func(t *testing.T) {
		s := newSource(t, b)
		ws, _ := st.store.WorkspaceBySlug(ctx, "default")
		if err := st.store.GuardSettingsSave(ctx, models.GuardSettings{WorkspaceID: ws.ID, Loop: models.LoopSettings{BreakerMax: 2, BreakerWindowSeconds: 600}}); err != nil {
			t.Fatal(err)
		}
		for i := range 12 {
			s.send(map[string]any{"event_type": "form_submitted", "email": "loop@example.com", "first_name": fmt.Sprintf("v%d", i), "target_stage": "SQL"})
		}
		// One delivery creates the contact, two more are allowed, the breaker holds the other nine.
		held := b.eventually("/w/default/", `[data-testid=counter-quarantined] dd`, "quarantined counter", func(s string) bool { return s == "9" })
		b.open("/w/default/dead-letters?kind=loop_suspected", `[data-testid=dead-letter-groups]`)
		b.shot("dead-letter-groups")
		if got := b.text(`[data-testid=dead-letter-group][data-kind=loop_suspected] [data-testid=group-events]`); got != held {
			t.Fatalf("the loop group counts %s events, %s were held", got, held)
		}
		if got := b.text(`[data-testid=dead-letter-group] [data-testid=group-dead-letters]`); got != "1" {
			t.Fatalf("the loop group has %s dead letters, want one for the breaker trip", got)
		}
		if rows := b.text(`[data-testid=dead-letters-table] tbody`); strings.Count(rows, "loop_suspected") != 1 {
			t.Fatalf("dead-letter rows: %q", rows)
		}
		b.do("reset the breaker, then replay",
			chromedp.Click(chromedp.CSS(`[data-testid=reset-and-replay] button`)),
			chromedp.WaitVisible(chromedp.CSS(`.flash-ok`)))
		if got := b.text(`.flash-ok`); !strings.Contains(got, "Circuit breaker reset.") || !strings.Contains(got, "holding "+held+" event(s)") {
			t.Fatalf("flash after reset and replay: %q", got)
		}
	})

	t.Run("act on all handles 500 with one audit entry", func(t *testing.T) {
		ws, _ := st.store.WorkspaceBySlug(ctx, "default")
		for i := range 500 {
			if _, err := st.store.DeadLetterAdd(ctx, models.DeadLetter{WorkspaceID: ws.ID, Kind: "side_effect_failed", Reason: "webhook answered 500"}); err != nil {
				t.Fatalf("dead letter %d: %v", i, err)
			}
		}
		b.open("/w/default/dead-letters?kind=side_effect_failed", `[data-testid=act-on-all]`)
		if got := b.text(`[data-testid=act-on-all] h2`); got != "Act on all 500 matching" {
			t.Fatalf("act-on-all title: %q", got)
		}
		b.do("discard all 500", chromedp.Click(chromedp.CSS(`[data-testid=act-on-all-discard]`)), chromedp.WaitVisible(chromedp.CSS(`.flash-ok`)))
		if got := b.text(`.flash-ok`); !strings.Contains(got, "Discarded 500 of 500 matching dead letter(s)") {
			t.Fatalf("flash: %q", got)
		}
		entries, err := st.store.AuditList(ctx, ws.ID, models.Page{Limit: 500})
		if err != nil {
			t.Fatal(err)
		}
		bulk, single := 0, 0
		for _, e := range entries {
			switch e.Action {
			case "dead_letter.bulk_discard":
				bulk++
				raw, _ := json.Marshal(e)
				if !strings.Contains(string(raw), `"matched":500`) || !strings.Contains(string(raw), `"kind":"side_effect_failed"`) {
					t.Fatalf("bulk audit entry: %s", raw)
				}
			case "dead_letter.discard":
				single++
			}
		}
		if bulk != 1 || single != 0 {
			t.Fatalf("discarding 500 wrote %d bulk and %d single audit entries, want 1 and 0", bulk, single)
		}
		if n, _ := st.store.DeadLetterCount(ctx, models.DeadLetterFilter{WorkspaceID: ws.ID, Kind: "side_effect_failed"}); n != 0 {
			t.Fatalf("%d still open", n)
		}
	})
}

// TestGuardSettingsInBrowser: the loop form shows the values in force and a
// silence threshold is edited in place.
func TestGuardSettingsInBrowser(t *testing.T) {
	st := newStack(t)
	ctx := context.Background()
	b := signIn(t, st)
	defer b.checkConsole()
	ws, _ := st.store.WorkspaceBySlug(ctx, "default")

	t.Run("the loop form shows the values in force", func(t *testing.T) {
		b.open("/w/default/guards", `[data-testid=loop-form]`)
		b.shot("guards")
		for name, want := range map[string]string{"echo_window_seconds": "600", "breaker_max": "20", "breaker_window_seconds": "600"} {
			if got := b.value(`[data-testid=loop-form] input[name=` + name + `]`); got != want {
				t.Fatalf("loop form shows %s = %q, %s is in force", name, got, want)
			}
		}
		b.do("save in place",
			chromedp.SetValue(chromedp.CSS(`[data-testid=loop-form] input[name=breaker_max]`), "7"),
			chromedp.Click(chromedp.CSS(`[data-testid=loop-form] button[type=submit]`)),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid=loop-form] [data-testid=saved-note]`)))
		if got := b.value(`[data-testid=loop-form] input[name=breaker_max]`); got != "7" {
			t.Fatalf("after the save the form shows %q", got)
		}
		s, _ := st.store.GuardSettingsGet(ctx, ws.ID)
		if s.Loop.BreakerMax != 7 || s.Loop.BreakerWindowSeconds != 600 {
			t.Fatalf("saved: %+v", s.Loop)
		}
	})

	t.Run("a silence threshold is edited in place", func(t *testing.T) {
		b.open("/w/default/guards", `[data-testid=silence-form]`)
		b.do("add a silence alarm",
			chromedp.SetValue(chromedp.CSS(`[data-testid=silence-form] input[name=threshold_minutes]`), "90"),
			chromedp.Click(chromedp.CSS(`[data-testid=silence-form] button[type=submit]`)),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid=silence-threshold]`)))
		if got := b.value(`[data-testid=silence-threshold]`); got != "90" {
			t.Fatalf("the new alarm shows a threshold of %q minutes", got)
		}
		var url string
		b.do("edit in place",
			chromedp.SetValue(chromedp.CSS(`[data-testid=silence-threshold]`), "15"),
			chromedp.Click(chromedp.CSS(`[data-testid=silence-edit] button[type=submit]`)),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid=silence-card] [data-testid=saved-note]`)))
		url, _ = chromedp.Run(b.ctx, chromedp.Location())
		if !strings.HasSuffix(url, "/w/default/guards") {
			t.Fatalf("the edit navigated to %s", url)
		}
		if got := b.value(`[data-testid=silence-threshold]`); got != "15" {
			t.Fatalf("after the edit the row shows %q", got)
		}
		alarms, _ := st.store.SilenceAlarmList(ctx, ws.ID)
		if len(alarms) != 1 || alarms[0].ThresholdSeconds != 900 {
			t.Fatalf("alarms after the edit: %+v", alarms)
		}
	})
}
