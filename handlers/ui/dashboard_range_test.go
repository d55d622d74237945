package ui_test

import (
	"context"
	"net/http"
	"regexp"
	"testing"
	"time"

	"github.com/leadgate/leadgate/handlers/handlerstest"
	"github.com/leadgate/leadgate/models"
)

var domainStart = regexp.MustCompile(`data-testid="rate-chart" data-domain-start="([^"]+)"`)

// The time-range picker: the range is in the URL, the polled fragment keeps
// it, and the chart's domain begins at the first event inside the range.
func TestUIDashboardRangePickerZoomsToTheData(t *testing.T) {
	t.Parallel()
	e := handlerstest.NewEnv(t)
	c := e.SignedIn(models.RoleViewer)
	src := e.SeedSource("Landing page")
	old := e.Event(src, "form_submitted", models.EventApplied, `{}`)
	e.Event(src, "form_submitted", models.EventApplied, `{}`)
	threeDays := time.Now().UTC().Add(-72 * time.Hour)
	if err := e.Store.DB().WithContext(context.Background()).Exec(`UPDATE events SET received_at = ? WHERE id = ?`, threeDays, old).Error; err != nil {
		t.Fatal(err)
	}
	start := func(what string, res handlerstest.Response) time.Time {
		t.Helper()
		handlerstest.ExpectStatus(t, what, res, http.StatusOK)
		m := domainStart.FindStringSubmatch(res.Body)
		if m == nil {
			t.Fatalf("%s: no chart domain", what)
		}
		v, err := time.Parse(time.RFC3339, m[1])
		if err != nil {
			t.Fatal(err)
		}
		return v
	}

	week := c.Get("/w/default/?range=7d")
	if got, want := start("7 days", week), threeDays.Truncate(time.Hour); !got.Equal(want) {
		t.Fatalf("7-day chart starts %v, want the first event's hour %v", got, want)
	}
	handlerstest.ExpectBody(t, "7 days", week, `hx-get="/w/default/health?range=7d"`, `aria-current="true" data-testid="range-7d"`,
		`hx-push-url="/w/default/?range=30d"`, "· last 7 days, UTC", "2 events")
	// The day holds only the recent event: twelve five-minute points before now, not 24 h of nothing.
	day := start("24 hours", c.Get("/w/default/"))
	if age := time.Since(day); age > 65*time.Minute || age < 55*time.Minute {
		t.Fatalf("24-hour chart starts %v ago, want about an hour", age)
	}
	frag := c.Get("/w/default/health?range=30d", "HX-Request", "true")
	handlerstest.ExpectBody(t, "fragment", frag, `data-testid="range-30d"`, "· last 30 days, UTC")
	if got := start("30-day fragment", frag); !got.Equal(threeDays.Truncate(6 * time.Hour)) {
		t.Fatalf("30-day chart starts %v", got)
	}
	bad := c.Get("/w/default/?range=90d")
	handlerstest.ExpectStatus(t, "unknown range", bad, http.StatusBadRequest)
	handlerstest.ExpectBody(t, "unknown range", bad, "choose 1h, 24h, 7d or 30d")
}
