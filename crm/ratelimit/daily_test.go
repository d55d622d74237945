package ratelimit_test

import (
	"context"
	"testing"
	"time"

	"github.com/leadgate/leadgate/crm/ratelimit"
)

// clock is an injected clock the test moves by hand.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func newDaily(t *testing.T, cfg ratelimit.DailyConfig, at time.Time) (*ratelimit.Daily, *clock) {
	t.Helper()
	rdb, prefix := newRedis(t)
	c := &clock{t: at}
	cfg.Prefix, cfg.Now = prefix, c.now
	d, err := ratelimit.NewDaily(rdb, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return d, c
}

// A backlog started at noon is spread over the rest of the day: the first burst goes at once, then one
// request per (seconds left / quota left); by 18:00 about half of what backfill may spend is spent, and
// the last of it goes out shortly before midnight, never the whole quota at noon.
func TestDailySpreadsABacklogOverTheRestOfTheDay(t *testing.T) {
	ctx := context.Background()
	noon := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	d, c := newDaily(t, ratelimit.DailyConfig{Limit: 2400, Reserve: 240, Burst: 10}, noon)
	for i := range 10 {
		if wait, err := d.Take(ctx, "dest:1", false); err != nil || wait != 0 {
			t.Fatalf("burst request %d: wait %s, err %v", i, wait, err)
		}
	}
	// 2,150 more may go to backfill over 43,200 s: one every 20 s once the burst is spent.
	wait, err := d.Take(ctx, "dest:1", false)
	if err != nil {
		t.Fatal(err)
	}
	if wait < 19*time.Second || wait > 21*time.Second {
		t.Fatalf("after the burst the 11th request waits %s, want about one interval of 43,200 s / 2,151", wait)
	}
	sent, last := 10, noon
	var atSix int
	midnight := noon.Add(12 * time.Hour)
	for c.t.Before(midnight) {
		wait, err := d.Take(ctx, "dest:1", false)
		if err != nil {
			t.Fatal(err)
		}
		if wait > 0 {
			if c.t.Before(noon.Add(6*time.Hour)) && c.t.Add(wait).After(noon.Add(6*time.Hour)) {
				atSix = sent
			}
			c.t = c.t.Add(wait)
			continue
		}
		sent, last = sent+1, c.t
	}
	if sent != 2160 {
		t.Errorf("backfill spent %d requests of the day, want 2160 (the 2400 quota less the 240 reserve)", sent)
	}
	if atSix < 1000 || atSix > 1160 {
		t.Errorf("%d backfill requests by 18:00, want about half of 2160", atSix)
	}
	if last.Before(midnight.Add(-10*time.Minute)) || !last.Before(midnight) {
		t.Errorf("the last backfill request of the day went at %s, want shortly before midnight", last.Format(time.TimeOnly))
	}
	c.t = last // the loop's last wait ran into the next day
	used, err := d.Used(ctx, "dest:1")
	if err != nil || used != 2160 {
		t.Errorf("used = %d (err %v), want 2160", used, err)
	}
	t.Logf("2160 backfill requests from 12:00: %d by 18:00, the last at %s", atSix, last.Format(time.TimeOnly))
}

// Live leads are not paced: they go through while backfill waits for its pace and while only the reserve
// is left, they slow the backfill pace that follows, and once the day's whole quota is spent they too
// wait, until midnight in the CRM's zone; the next day starts afresh.
func TestDailyLetsLiveLeadsThroughAndSpendsTheReserveOnlyOnThem(t *testing.T) {
	ctx := context.Background()
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 12, 1, 22, 0, 0, 0, ny) // two hours before the account's midnight
	d, c := newDaily(t, ratelimit.DailyConfig{Limit: 100, Reserve: 20, Burst: 1, Zone: ny}, at)
	if wait, _ := d.Take(ctx, "dest:2", false); wait != 0 {
		t.Fatalf("first backfill request waits %s", wait)
	}
	paced, _ := d.Take(ctx, "dest:2", false)
	if paced <= 0 {
		t.Fatal("a second backfill request went at once, above the pace (burst 1)")
	}
	for i := range 60 {
		if wait, err := d.Take(ctx, "dest:2", true); err != nil || wait != 0 {
			t.Fatalf("live request %d waited %s (err %v) while backfill was paced", i, wait, err)
		}
	}
	// 61 spent, 39 left of which 20 are reserved: backfill's interval grew from 7200/79 s to 7200/19 s.
	slower, _ := d.Take(ctx, "dest:2", false)
	if slower <= paced {
		t.Errorf("backfill wait after 60 live requests = %s, want longer than %s", slower, paced)
	}
	for range 19 {
		for {
			wait, err := d.Take(ctx, "dest:2", false)
			if err != nil {
				t.Fatal(err)
			}
			if wait == 0 {
				break
			}
			c.t = c.t.Add(wait)
		}
	}
	// 80 spent: only the reserve is left; backfill waits for the next day, live leads still go.
	wait, _ := d.Take(ctx, "dest:2", false)
	midnight := time.Date(2026, 12, 2, 0, 0, 0, 0, ny)
	if got := c.t.Add(wait); !got.Equal(midnight) {
		t.Errorf("backfill with only the reserve left waits until %s, want the account's midnight %s", got, midnight)
	}
	for i := range 20 {
		if wait, _ := d.Take(ctx, "dest:2", true); wait != 0 {
			t.Fatalf("live request %d of the reserve waited %s", i, wait)
		}
	}
	wait, _ = d.Take(ctx, "dest:2", true)
	if got := c.t.Add(wait); !got.Equal(midnight) {
		t.Errorf("a live request with the day's quota spent waits until %s, want %s", got, midnight)
	}
	c.t = midnight.Add(time.Second)
	if wait, _ := d.Take(ctx, "dest:2", false); wait != 0 {
		t.Errorf("the first backfill request of the next day waits %s", wait)
	}
}

// What the CRM reports left today (other apps on the same account spend the quota too) is followed: the
// used count rises to it and backfill slows down accordingly; a report below our own count is ignored.
func TestDailyFollowsTheQuotaTheCRMReports(t *testing.T) {
	ctx := context.Background()
	at := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	d, _ := newDaily(t, ratelimit.DailyConfig{Limit: 200_000, Burst: 1}, at)
	if wait, _ := d.Take(ctx, "loc", false); wait != 0 {
		t.Fatal("first request paced")
	}
	before, _ := d.Take(ctx, "loc", false)
	if err := d.Observe(ctx, "loc", 30_000); err != nil { // 170,000 spent elsewhere
		t.Fatal(err)
	}
	if used, _ := d.Used(ctx, "loc"); used != 170_000 {
		t.Fatalf("used = %d after the CRM reported 30,000 left, want 170,000", used)
	}
	// 30,000 left less the 20,000 reserve: backfill's interval is now 86,400 s / 10,000, not / 179,999.
	after, _ := d.Take(ctx, "loc", false)
	if after < 5*before {
		t.Errorf("backfill wait %s after the report, want far longer than %s", after, before)
	}
	if err := d.Observe(ctx, "loc", 190_000); err != nil {
		t.Fatal(err)
	}
	if used, _ := d.Used(ctx, "loc"); used != 170_000 {
		t.Errorf("a report of more quota left than counted lowered used to %d", used)
	}
}

// Due says how long backfill would wait without spending anything; Spend records a batch's further
// requests, which count in the day and push the backfill pace on, whatever the pace said.
func TestDailyDueSpendsNothingAndSpendMovesThePace(t *testing.T) {
	ctx := context.Background()
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	d, _ := newDaily(t, ratelimit.DailyConfig{Limit: 43_201, Reserve: -1, Burst: 1}, at) // one a second
	for range 3 {
		if due, err := d.Due(ctx, "k", false); err != nil || due != 0 {
			t.Fatalf("due = %s (err %v) on a fresh day", due, err)
		}
	}
	if used, _ := d.Used(ctx, "k"); used != 0 {
		t.Fatalf("Due spent %d requests", used)
	}
	if wait, _ := d.Take(ctx, "k", false); wait != 0 {
		t.Fatal("the first request was paced")
	}
	if err := d.Spend(ctx, "k", 4, false); err != nil { // the batch took 5 requests in all
		t.Fatal(err)
	}
	if used, _ := d.Used(ctx, "k"); used != 5 {
		t.Errorf("used = %d after a 5-request batch, want 5", used)
	}
	if due, _ := d.Due(ctx, "k", false); due < 4500*time.Millisecond || due > 5500*time.Millisecond {
		t.Errorf("backfill due in %s after a 5-request batch at one a second, want about 5 s", due)
	}
	if due, _ := d.Due(ctx, "k", true); due != 0 {
		t.Errorf("live work due in %s, want at once", due)
	}
}
