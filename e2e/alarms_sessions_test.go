//go:build proof

package e2e

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/leadgate/leadgate/models"
)

// signIn signs the browser in through the form and waits for Pipeline health.
func (b *browser) signIn(email, password string) {
	b.t.Helper()
	b.open("/login", `input[name=email]`)
	b.do("sign in",
		chromedp.SetValue(chromedp.CSS(`input[name=email]`), email),
		chromedp.SetValue(chromedp.CSS(`input[name=password]`), password),
		chromedp.Click(chromedp.CSS(`button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=health-panel]`)),
	)
}

// A source falls silent: its banner shows on Pipeline health and its row says so; when it recovers,
// the banner leaves the refreshing panel by itself. The silence state is driven through the store,
// as the silence checker writes it.
func TestAlarmBannerFollowsASilentSource(t *testing.T) {
	st := newStack(t)
	ctx := context.Background()
	if _, err := st.store.UserCreate(ctx, adminEmail, adminPassword, models.RoleAdmin, false); err != nil {
		t.Fatal(err)
	}
	ws, err := st.store.WorkspaceBySlug(ctx, "default")
	if err != nil {
		t.Fatal(err)
	}
	src := models.Source{WorkspaceID: ws.ID, Name: "Voice agent", Kind: "standard-webhooks", Channel: "voice", Enabled: true}
	if err := st.store.SourceCreate(ctx, &src); err != nil {
		t.Fatal(err)
	}
	b := newBrowser(t, st.url)
	b.signIn(adminEmail, adminPassword)
	if strings.Contains(b.text(`[data-testid=health-panel]`), "No event from Voice agent") {
		t.Fatal("a banner shows before the source went silent")
	}

	if err := st.store.DB().Exec(`INSERT INTO silence_alarms (workspace_id, source_id, metric, rule, threshold_seconds, enabled, silent, silent_since, message)
		VALUES (?, ?, 'apply', 'static', 300, true, true, ?, 'No event from Voice agent for 12 minutes')`, ws.ID, src.ID, time.Now().Add(-12*time.Minute)).Error; err != nil {
		t.Fatal(err)
	}
	banner := b.eventually("/w/default/", `[data-testid=health-panel]`, "silence banner", func(s string) bool {
		return strings.Contains(s, "No event from Voice agent for 12 minutes")
	})
	if !strings.Contains(banner, "Check that the sender") {
		t.Fatalf("the banner says nothing about what to do: %q", banner)
	}
	if got := b.text(`[data-testid=nav-count-dashboard]`); !strings.HasPrefix(got, "1") {
		t.Fatalf("nav alarm count reads %q, want 1", got)
	}
	b.open("/w/default/sources", `[data-testid=source-alarm]`)
	if got := b.text(`[data-testid=source-alarm]`); got != "silent 12 min" {
		t.Fatalf("source row says %q, want silent 12 min", got)
	}
	b.shot("alarm-banner")

	// Recovery: the dashboard's panel refreshes every 10 s and drops the banner without a reload.
	b.open("/w/default/", `[data-testid=alarm-silence]`)
	if err := st.store.DB().Exec(`UPDATE silence_alarms SET silent = false, silent_since = NULL, message = '' WHERE source_id = ?`, src.ID).Error; err != nil {
		t.Fatal(err)
	}
	waitCtx, cancel := context.WithTimeout(b.ctx, 25*time.Second)
	defer cancel()
	if err := chromedp.Do(waitCtx, chromedp.WaitNotPresent(chromedp.CSS(`[data-testid=alarm-silence]`))); err != nil {
		t.Fatalf("the silence banner stayed after the source recovered: %v", err)
	}
	b.checkConsole()
}

// A session cookie copied out of the browser works until the browser signs out, and never after.
func TestACopiedSessionCookieIsRefusedAfterSignOut(t *testing.T) {
	st := newStack(t)
	if _, err := st.store.UserCreate(context.Background(), adminEmail, adminPassword, models.RoleAdmin, false); err != nil {
		t.Fatal(err)
	}
	b := newBrowser(t, st.url)
	b.signIn(adminEmail, adminPassword)
	res, err := chromedp.Call(b.ctx, network.GetCookies, network.GetCookiesParams{URLs: []string{st.url}})
	if err != nil {
		t.Fatalf("read the browser's cookies: %v", err)
	}
	var copied *http.Cookie
	for _, c := range res.Cookies {
		if c.Name == "leadgate_session" {
			copied = &http.Cookie{Name: c.Name, Value: c.Value}
		}
	}
	if copied == nil {
		t.Fatalf("no session cookie among %d cookies", len(res.Cookies))
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func() *http.Response {
		req, _ := http.NewRequest(http.MethodGet, st.url+"/w/default/", nil)
		req.AddCookie(copied)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	if resp := get(); resp.StatusCode != http.StatusOK {
		t.Fatalf("the copied cookie before sign-out: %d, want 200", resp.StatusCode)
	}
	b.do("sign out",
		chromedp.Click(chromedp.CSS(`form[action="/logout"] button`)),
		chromedp.WaitVisible(chromedp.CSS(`input[name=email]`)),
	)
	resp := get()
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(resp.Header.Get("Location"), "/login") {
		t.Fatalf("the copied cookie after sign-out: %d to %q, want 303 to /login", resp.StatusCode, resp.Header.Get("Location"))
	}
	b.checkConsole()
}
