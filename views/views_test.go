package views

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/a-h/templ"
)

func render(t *testing.T, c templ.Component) string {
	t.Helper()
	var buf bytes.Buffer
	if err := c.Render(context.Background(), &buf); err != nil {
		t.Fatalf("render: %v", err)
	}
	return buf.String()
}

func wantNodes(t *testing.T, html string, fragments ...string) {
	t.Helper()
	for _, f := range fragments {
		if !strings.Contains(html, f) {
			t.Errorf("output lacks %q", f)
		}
	}
}

var meta = PageMeta{
	Title: "Sources", Role: RoleViewer, Nav: NavSources, CSRFToken: "tok123",
	User:       UserRef{ID: 1, Email: "ana.lopez@example.com"},
	Workspace:  WorkspaceRef{Slug: "acme", Name: "Acme"},
	Workspaces: []WorkspaceRef{{Slug: "default", Name: "Default"}, {Slug: "acme", Name: "Acme"}},
	Assets:     Assets{CSS: "/static/css/app.abc.css", HTMX: "/static/js/htmx.min.abc.js"},
	Flash:      &Flash{Kind: "ok", Message: "Saved <b>"},
}

func TestPageChrome(t *testing.T) {
	html := render(t, SourcesPage(meta, SourcesView{Workspace: meta.Workspace}))
	wantNodes(t, html,
		`<link rel="stylesheet" href="/static/css/app.abc.css">`,
		`<script src="/static/js/htmx.min.abc.js" defer></script>`,
		`hx-headers="{&#34;X-CSRF-Token&#34;:&#34;tok123&#34;}"`,
		`href="/w/acme/sources" class="nav-link active" aria-current="page"`,
		`href="/w/default/"`, // the switcher
		`<span class="avatar" aria-hidden="true">AL</span>`,
		`Saved &lt;b&gt;`, // flash text is escaped
		`name="gorilla.csrf.Token" value="tok123"`,
		`data-testid="empty-state"`,
	)
	// A viewer is not offered what it may not do.
	for _, absent := range []string{"New source", "/users", "/tokens", "Create a source"} {
		if strings.Contains(html, absent) {
			t.Errorf("viewer page offers %q", absent)
		}
	}
	admin := meta
	admin.Role, admin.InstanceAdmin = RoleAdmin, true
	html = render(t, SourcesPage(admin, SourcesView{Workspace: meta.Workspace, CanEdit: true}))
	wantNodes(t, html, `href="/users"`, `href="/tokens"`, "New source", "Create a source")
	// An admin of this workspace only (a membership) is not offered instance pages.
	wsAdmin := admin
	wsAdmin.InstanceAdmin = false
	html = render(t, SourcesPage(wsAdmin, SourcesView{Workspace: meta.Workspace, CanEdit: true}))
	for _, absent := range []string{`href="/users"`, `href="/tokens"`, "Manage workspaces"} {
		if strings.Contains(html, absent) {
			t.Errorf("workspace admin page offers %q", absent)
		}
	}
}

func TestHealthPanel(t *testing.T) {
	now := time.Date(2026, 10, 31, 12, 0, 0, 0, time.UTC)
	last := now.Add(-3 * time.Minute)
	values := make([]float64, 289)
	values[288] = 2.4
	v := DashboardView{
		Workspace: WorkspaceRef{Slug: "acme", Name: "Acme"}, Received: 12345, Duplicates: 45, DuplicateRate: "0.4%", DeadLetters: 2,
		Counters: []Counter{{Key: "applied", Label: "Applied", Value: 7, Tone: "good"}},
		Chart:    NewRateChart(now.Add(-24*time.Hour), 5*time.Minute, []ChartSeries{{Name: "Web <form>", Values: values, Total: 12}}),
		Sources:  []SourceHealth{{ID: 9, Name: "Web <form>", Kind: "hmac", Enabled: true, LastEvent: &last, Events24h: 12}},
		Now:      now,
	}
	html := render(t, HealthPanel(v))
	wantNodes(t, html,
		`<section id="health" class="health" hx-get="/w/acme/health" hx-trigger="every 10s" hx-swap="outerHTML"`,
		`data-testid="kpi-received">12,345<`,
		`data-testid="kpi-duplicate-rate">0.4%<`,
		`class="kpi-value tone-bad">2<`,
		`data-testid="counter-applied"`,
		`<polyline class="line series-0"`,
		`Web &lt;form&gt;`,
		`3 min ago`,
		`peak 2.4/min`,
	)
	if strings.Contains(html, "<html") || strings.Contains(html, "empty-state") {
		t.Error("the fragment must be only the panel, and not empty with a source present")
	}
}

func TestNewRateChart(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := NewRateChart(start, time.Hour, []ChartSeries{{Name: "a", Values: []float64{0, 3, 0}}, {Name: "b", Values: []float64{1, 1, 1}}})
	if c.Empty {
		t.Fatal("chart with events reports empty")
	}
	if got := c.YTicks[len(c.YTicks)-1].Label; got != "5" {
		t.Errorf("top tick %q, want 5 (3 rounded up to a nice number)", got)
	}
	if c.Lines[0].Points != "44.0,190.0 376.0,83.2 708.0,190.0" {
		t.Errorf("series a points %q", c.Lines[0].Points)
	}
	if c.Lines[1].Class != "series-1" || c.Lines[1].Peak != 1 {
		t.Errorf("series b %+v", c.Lines[1])
	}
	if len(c.XTicks) != 3 || c.XTicks[0].Label != "00:00" || c.XTicks[2].Label != "02:00" || c.XTicks[2].Pos != c.Right {
		t.Errorf("x ticks %+v", c.XTicks)
	}
	if !c.Start.Equal(start) || !c.End.Equal(start.Add(2*time.Hour)) {
		t.Errorf("domain %v – %v", c.Start, c.End)
	}
	if e := NewRateChart(start, time.Hour, nil); !e.Empty || len(e.YTicks) != 5 {
		t.Errorf("empty chart %+v", e)
	}
}

func TestRateChartAxisLabelsRoundInstantsAndDatesPastADay(t *testing.T) {
	// 7 days of hourly points from 13:00: at most six labels, on whole days, dated.
	start := time.Date(2026, 3, 1, 13, 0, 0, 0, time.UTC)
	week := NewRateChart(start, time.Hour, []ChartSeries{{Name: "a", Values: make([]float64, 7*24+1)}})
	if n := len(week.XTicks); n == 0 || n > maxXTicks {
		t.Fatalf("%d week ticks: %+v", n, week.XTicks)
	}
	for _, tk := range week.XTicks {
		if _, err := time.Parse("2 Jan", tk.Label); err != nil || tk.Pos < week.Left || tk.Pos > week.Right {
			t.Errorf("week tick %+v is not a date inside the plot", tk)
		}
	}
	if got := week.Domain(); got != "1 Mar 13:00 – 8 Mar 13:00 UTC" {
		t.Errorf("week domain %q", got)
	}
	// 47 minutes of one-minute points from 10:13: labels every 10 minutes, times only.
	hour := NewRateChart(time.Date(2026, 3, 1, 10, 13, 0, 0, time.UTC), time.Minute, []ChartSeries{{Name: "a", Values: make([]float64, 48)}})
	var labels []string
	for _, tk := range hour.XTicks {
		labels = append(labels, tk.Label)
	}
	if got := strings.Join(labels, " "); got != "10:20 10:30 10:40 10:50 11:00" {
		t.Errorf("hour ticks %q", got)
	}
	if got := hour.Domain(); got != "10:13 – 11:00 UTC" {
		t.Errorf("hour domain %q", got)
	}
}

func TestNiceCeil(t *testing.T) {
	for in, want := range map[float64]float64{0: 1, 0.3: 1, 1.2: 2, 3: 5, 7: 10, 12: 20, 480: 500, 1000: 1000} {
		if got := niceCeil(in); got != want {
			t.Errorf("niceCeil(%v) = %v, want %v", in, got, want)
		}
	}
}

func TestCount(t *testing.T) {
	for in, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", -4200: "-4,200"} {
		if got := count(in); got != want {
			t.Errorf("count(%d) = %q, want %q", in, got, want)
		}
	}
}
