package alarm_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/leadgate/leadgate/guards/alarm"
	"github.com/leadgate/leadgate/guards/alert"
	"github.com/leadgate/leadgate/models"
	"github.com/leadgate/leadgate/models/modelstest"
)

// bundle is one subtest's workspace, source and clock.
type bundle struct {
	store  *models.Store
	ws     int64
	source int64
	now    time.Time
	paused int
	mon    *alarm.Monitor
}

func setup(t *testing.T, store *models.Store) *bundle {
	t.Helper()
	ctx := context.Background()
	name := strings.ReplaceAll(strings.ToLower(t.Name()[strings.LastIndexByte(t.Name(), '/')+1:]), "_", "-")
	ws, err := store.WorkspaceCreate(ctx, "m-"+name[:min(len(name), 40)], name)
	if err != nil {
		t.Fatal(err)
	}
	src := models.Source{WorkspaceID: ws.ID, Name: "Web form", Kind: "standard-webhooks"}
	if err := store.SourceCreate(ctx, &src); err != nil {
		t.Fatal(err)
	}
	b := &bundle{store: store, ws: ws.ID, source: src.ID, now: time.Now()}
	b.mon = &alarm.Monitor{Store: store, Now: func() time.Time { return b.now },
		Destinations: func(context.Context, int64) (int, time.Duration, bool, error) { return b.paused, 0, false, nil }}
	return b
}

func (b *bundle) exec(t *testing.T, sql string, args ...any) {
	t.Helper()
	if err := b.store.DB().Exec(sql, args...).Error; err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

func (b *bundle) event(t *testing.T, status string, at time.Time) {
	t.Helper()
	b.exec(t, `INSERT INTO events (id, workspace_id, source_id, idempotency_key, occurred_at, received_at, status, processed_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, uuid.NewString(), b.ws, b.source, uuid.NewString(), at, at, status, at)
}

// alerts returns the workspace's alert rows as "action type:metric" strings, oldest first.
func (b *bundle) alerts(t *testing.T) []string {
	t.Helper()
	rows, err := b.store.AlertRows(context.Background(), b.ws, 100)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for i := len(rows) - 1; i >= 0; i-- {
		var p alert.Payload
		_ = json.Unmarshal(rows[i].Payload, &p)
		out = append(out, fmt.Sprintf("%s %s:%v", p.Action, p.Type, p.Details["metric"]))
	}
	return out
}

func (b *bundle) checkHealth(t *testing.T) {
	t.Helper()
	if err := b.mon.CheckHealth(context.Background()); err != nil {
		t.Fatalf("check health: %v", err)
	}
}

func TestMonitor(t *testing.T) {
	store := modelstest.Store(t)
	t.Run("HealthAlarmsFireOnceAndRecover", func(t *testing.T) { testHealth(t, store) })
	t.Run("SilenceThroughPostgres", func(t *testing.T) { testSilence(t, store) })
	t.Run("DeadmanNoticesMissedTicks", func(t *testing.T) { testDeadman(t, store) })
}

// testHealth drives every health metric across its threshold and back,
// checking twice at each level: each fires exactly once and recovers once.
func testHealth(t *testing.T, store *models.Store) {
	cases := []struct {
		metric  string
		cross   func(t *testing.T, b *bundle)
		recover func(t *testing.T, b *bundle)
	}{
		{alarm.MetricDestinationPausedAuth,
			func(t *testing.T, b *bundle) { b.paused = 1 },
			func(t *testing.T, b *bundle) { b.paused = 0 }},
		{alarm.MetricOutboxOldest,
			func(t *testing.T, b *bundle) {
				b.exec(t, `INSERT INTO outbox (workspace_id, kind, stable_id, payload, created_at) VALUES (?, 'side_effect', 'se:1', '{}', ?)`, b.ws, b.now.Add(-time.Hour))
			},
			func(t *testing.T, b *bundle) { b.exec(t, `UPDATE outbox SET status = 'sent' WHERE stable_id = 'se:1'`) }},
		{alarm.MetricSyncLag,
			func(t *testing.T, b *bundle) {
				b.exec(t, `INSERT INTO outbox (workspace_id, kind, stable_id, payload, created_at) VALUES (?, 'crm_upsert', 'crm:1', '{}', ?)`, b.ws, b.now.Add(-20*time.Minute))
			},
			func(t *testing.T, b *bundle) {
				b.exec(t, `UPDATE outbox SET status = 'sent', sent_at = now() WHERE stable_id = 'crm:1'`)
			}},
		{alarm.MetricDeadLettersOpen,
			func(t *testing.T, b *bundle) {
				for range 26 {
					b.exec(t, `INSERT INTO dead_letters (workspace_id, kind, reason) VALUES (?, 'invalid_mapping', 'x')`, b.ws)
				}
			},
			func(t *testing.T, b *bundle) {
				b.exec(t, `UPDATE dead_letters SET status = 'discarded' WHERE workspace_id = ? AND id IN (SELECT id FROM dead_letters WHERE workspace_id = ? LIMIT 2)`, b.ws, b.ws)
			}},
		{alarm.MetricDeadLettersOldest,
			func(t *testing.T, b *bundle) {
				b.exec(t, `INSERT INTO dead_letters (workspace_id, kind, reason, created_at) VALUES (?, 'transient', 'old', ?)`, b.ws, b.now.Add(-48*time.Hour))
			},
			func(t *testing.T, b *bundle) {
				b.exec(t, `UPDATE dead_letters SET status = 'replayed' WHERE workspace_id = ?`, b.ws)
			}},
		{alarm.MetricIngestRejectionRate,
			func(t *testing.T, b *bundle) {
				for i := range 20 {
					status := models.EventApplied
					if i%2 == 0 {
						status = models.EventRejected
					}
					b.event(t, status, b.now.Add(-10*time.Minute))
				}
			},
			func(t *testing.T, b *bundle) {
				for range 40 {
					b.event(t, models.EventApplied, b.now.Add(-5*time.Minute))
				}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.metric, func(t *testing.T) {
			b := setup(t, store)
			b.checkHealth(t)
			if got := b.alerts(t); len(got) != 0 {
				t.Fatalf("alerts before crossing: %v", got)
			}
			tc.cross(t, b)
			b.checkHealth(t)
			b.now = b.now.Add(time.Minute)
			b.checkHealth(t)
			if got := b.alerts(t); len(got) != 1 || got[0] != "trigger health:"+tc.metric {
				t.Fatalf("alerts after crossing %v, want exactly one trigger for %s", got, tc.metric)
			}
			tc.recover(t, b)
			b.checkHealth(t)
			b.now = b.now.Add(time.Minute)
			b.checkHealth(t)
			got := b.alerts(t)
			if len(got) != 2 || got[1] != "resolve health:"+tc.metric {
				t.Fatalf("alerts after recovery %v, want one resolve for %s", got, tc.metric)
			}
			rows, _ := b.store.AlertRows(context.Background(), b.ws, 10)
			var trig, res alert.Payload
			_ = json.Unmarshal(rows[1].Payload, &trig)
			_ = json.Unmarshal(rows[0].Payload, &res)
			if trig.DedupKey == "" || trig.DedupKey != res.DedupKey {
				t.Fatalf("trigger and resolve must share a dedup key: %q vs %q", trig.DedupKey, res.DedupKey)
			}
		})
	}
	t.Run("ThresholdFromTheAPI", func(t *testing.T) {
		b := setup(t, store)
		if err := store.HealthAlarmConfigure(context.Background(), b.ws, alarm.MetricDeadLettersOpen, 0, true); err != nil {
			t.Fatal(err)
		}
		b.exec(t, `INSERT INTO dead_letters (workspace_id, kind, reason) VALUES (?, 'invalid_mapping', 'x')`, b.ws)
		b.checkHealth(t)
		if got := b.alerts(t); len(got) != 1 || got[0] != "trigger health:dead_letters_open" {
			t.Fatalf("alerts %v", got)
		}
		// Disabling a firing alarm closes its incident.
		if err := store.HealthAlarmConfigure(context.Background(), b.ws, alarm.MetricDeadLettersOpen, 0, false); err != nil {
			t.Fatal(err)
		}
		b.checkHealth(t)
		b.checkHealth(t)
		if got := b.alerts(t); len(got) != 2 || got[1] != "resolve health:dead_letters_open" {
			t.Fatalf("alerts %v", got)
		}
	})
}

// testSilence runs a silence alarm through Postgres with the injected clock.
func testSilence(t *testing.T, store *models.Store) {
	b := setup(t, store)
	ctx := context.Background()
	berlin := mustLoad(t, "Europe/Berlin")
	bh, _ := json.Marshal(alarm.BusinessHours{TimeZone: "Europe/Berlin", Weekdays: []string{"mon", "tue", "wed", "thu", "fri"}, From: "09:00", To: "17:00"})
	a := models.SilenceAlarm{WorkspaceID: b.ws, SourceID: &b.source, Metric: models.SilenceApply, ThresholdSeconds: 5400, ReminderSeconds: 3600,
		BusinessHours: bh, Enabled: true}
	if err := store.SilenceAlarmCreate(ctx, &a); err != nil {
		t.Fatal(err)
	}
	b.event(t, models.EventApplied, time.Date(2026, 1, 16, 16, 0, 0, 0, berlin)) // Friday 16:00
	check := func(at time.Time) {
		b.now = at
		if err := b.mon.CheckSilence(ctx); err != nil {
			t.Fatalf("check at %s: %v", at, err)
		}
	}
	check(time.Date(2026, 1, 17, 11, 0, 0, 0, berlin)) // Saturday
	check(time.Date(2026, 1, 19, 9, 29, 0, 0, berlin)) // Monday, 1h29m of business time
	if got := b.alerts(t); len(got) != 0 {
		t.Fatalf("alerts outside hours / under the threshold: %v", got)
	}
	check(time.Date(2026, 1, 19, 9, 30, 0, 0, berlin))
	check(time.Date(2026, 1, 19, 9, 45, 0, 0, berlin))
	check(time.Date(2026, 1, 19, 10, 30, 0, 0, berlin))
	b.event(t, models.EventApplied, time.Date(2026, 1, 19, 10, 40, 0, 0, berlin))
	check(time.Date(2026, 1, 19, 10, 41, 0, 0, berlin))
	check(time.Date(2026, 1, 19, 10, 42, 0, 0, berlin))
	rows, err := store.AlertRows(ctx, b.ws, 10)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range rows {
		ids = append(ids, r.StableID)
	}
	sort.Strings(ids)
	since := time.Date(2026, 1, 19, 9, 30, 0, 0, berlin).Unix()
	key := fmt.Sprintf("alert:silence:%d:%d:%d", b.ws, a.ID, since)
	want := []string{key, key + ":reminder:1", key + ":recovered"}
	sort.Strings(want)
	if strings.Join(ids, ",") != strings.Join(want, ",") {
		t.Fatalf("alerts %v, want %v", ids, want)
	}
	got, err := store.SilenceAlarmGet(ctx, b.ws, a.ID)
	if err != nil || got.Silent || got.LastCheckedAt == nil {
		t.Fatalf("state %+v (%v): want not silent after recovery", got, err)
	}
}

func testDeadman(t *testing.T, store *models.Store) {
	b := setup(t, store)
	ctx := context.Background()
	var pings int
	hb := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { pings++ }))
	defer hb.Close()
	if err := store.GuardSettingsSave(ctx, models.GuardSettings{WorkspaceID: b.ws,
		Alerting: models.AlertingSettings{HeartbeatURL: hb.URL + "/ping/abc", AllowedHosts: []string{"127.0.0.1"}}}); err != nil {
		t.Fatal(err)
	}
	pool := hb.Client().Transport.(*http.Transport).TLSClientConfig
	d := &alarm.Deadman{Store: store, Guards: &alert.WorkspaceGuards{Store: store, Base: alert.Guard{TLS: pool}}, Now: func() time.Time { return b.now }}
	start := time.Now().Add(time.Hour).Truncate(time.Minute)
	for i := range 3 { // on time
		b.now = start.Add(time.Duration(i) * time.Minute)
		if err := d.Tick(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if got := b.alerts(t); len(got) != 0 {
		t.Fatalf("alerts while ticking on time: %v", got)
	}
	b.now = start.Add(12 * time.Minute) // ten ticks missed
	if err := d.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	got := b.alerts(t)
	if len(got) != 1 || !strings.HasPrefix(got[0], "trigger deadman") {
		t.Fatalf("alerts %v, want one deadman alert", got)
	}
	if pings != 4 {
		t.Fatalf("heartbeat pinged %d times, want once per tick (4)", pings)
	}
}
