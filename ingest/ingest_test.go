package ingest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/leadgate/leadgate/ingest/mapping"
	"github.com/leadgate/leadgate/models"
)

func TestContentType(t *testing.T) {
	cases := []struct {
		raw, want string
		ok        bool
	}{
		{"application/json", "application/json", true},
		{"application/json; charset=utf-8", "application/json", true},
		{"APPLICATION/JSON", "application/json", true},
		{"application/vnd.api+json", "application/json", true},
		{"application/x-www-form-urlencoded", "application/x-www-form-urlencoded", true},
		{"", "", false},
		{"text/plain", "", false},
		{"multipart/form-data; boundary=x", "", false},
		{"application/json; =broken", "", false},
		{"+json", "", false},
	}
	for _, c := range cases {
		got, err := contentType(c.raw)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("contentType(%q) = %q, %v; want %q ok=%v", c.raw, got, err, c.want, c.ok)
		}
	}
}

func FuzzContentType(f *testing.F) {
	for _, s := range []string{"application/json", "text/plain; charset=utf-8", "a/b+json", "", ";;;", "application/json; q=\"x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		mt, err := contentType(raw)
		if err == nil && mt != "application/json" && mt != "application/x-www-form-urlencoded" {
			t.Fatalf("contentType(%q) accepted %q", raw, mt)
		}
		if err != nil && !strings.Contains(err.Error(), "not supported") {
			t.Fatalf("contentType(%q): unclear error %v", raw, err)
		}
	})
}

func leadFor(t testing.TB, it mapping.Item, cfg models.SourceConfig, now time.Time) *lead {
	t.Helper()
	if it.Fields == nil {
		it.Fields = map[string]any{}
	}
	return normalizeItem(it, cfg, now, nil)
}

func TestIdempotencyKey(t *testing.T) {
	now := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	at := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	jane := leadFor(t, mapping.Item{Email: " Jane@Example.com", EventType: "form_submitted", OccurredAt: at}, models.SourceConfig{}, now)
	janeAgain := leadFor(t, mapping.Item{Email: "jane@example.COM ", EventType: "form_submitted", OccurredAt: at}, models.SourceConfig{}, now)
	janeLater := leadFor(t, mapping.Item{Email: "jane@example.com", EventType: "form_submitted", OccurredAt: at.Add(time.Minute)}, models.SourceConfig{}, now)
	phoneOnly := leadFor(t, mapping.Item{Phone: "(415) 555-0134", EventType: "call"}, models.SourceConfig{DefaultRegion: "US"}, now)

	key, windowed := idempotencyKey("stripe", "evt_1", 1, 2, nil, jane)
	if key != "stripe:evt_1" || windowed {
		t.Errorf("provider id: key %q windowed %v, want stripe:evt_1 forever", key, windowed)
	}
	hash := func(ws, src int64, fields []string, l *lead) string {
		k, w := idempotencyKey("token", "", ws, src, fields, l)
		if !w || len(k) != 64 {
			t.Fatalf("content key %q windowed %v, want a windowed sha-256", k, w)
		}
		return k
	}
	base := hash(1, 2, nil, jane)
	if hash(1, 2, nil, janeAgain) != base {
		t.Error("the same lead spelled differently must hash alike after normalization")
	}
	if hash(1, 2, nil, janeLater) == base {
		t.Error("a different occurred_at is a different event")
	}
	if hash(1, 3, nil, jane) == base || hash(2, 2, nil, jane) == base {
		t.Error("keys are scoped to workspace and source")
	}
	if hash(1, 2, []string{"email"}, jane) != hash(1, 2, []string{"email"}, janeLater) {
		t.Error("configured dedupe fields replace the defaults")
	}
	if hash(1, 2, nil, phoneOnly) == hash(1, 2, nil, leadFor(t, mapping.Item{EventType: "call"}, models.SourceConfig{}, now)) {
		t.Error("a phone-only lead must dedupe on its phone")
	}
}

func TestNormalizeItemTimes(t *testing.T) {
	now := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	cases := []struct {
		name      string
		occurred  time.Time
		want      time.Time
		wantGiven bool
	}{
		{"given", now.Add(-time.Hour), now.Add(-time.Hour), true},
		{"missing is arrival time", time.Time{}, now, false},
		{"absurd future is arrival time", now.Add(48 * time.Hour), now, true},
		{"slightly ahead (clock skew) is kept", now.Add(time.Hour), now.Add(time.Hour), true},
	}
	for _, c := range cases {
		l := leadFor(t, mapping.Item{Email: "a@example.com", OccurredAt: c.occurred}, models.SourceConfig{}, now)
		if !l.occurredAt.Equal(c.want) || l.occurredGiven != c.wantGiven {
			t.Errorf("%s: occurredAt %s given %v, want %s %v", c.name, l.occurredAt, l.occurredGiven, c.want, c.wantGiven)
		}
	}
}

func TestLeadEvent(t *testing.T) {
	now := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	src := models.Source{ID: 7, WorkspaceID: 3, Channel: "web_form", Config: models.SourceConfig{DefaultEventType: "lead"}}
	t.Run("bad phone beside a good email is flagged, not dropped", func(t *testing.T) {
		l := leadFor(t, mapping.Item{Email: "Ann@Example.com", Phone: "12345678901234567890", Raw: []byte(`{"x":"a\u0000b"}`)}, src.Config, now)
		ev, err := l.event("id-1", src, "application/json", now)
		if err != nil {
			t.Fatal(err)
		}
		if ev.Status != models.EventPending || *ev.Email != "ann@example.com" || ev.Phone != nil || *ev.PhoneRaw != "12345678901234567890" || ev.PhoneProblem == nil {
			t.Fatalf("event %+v", ev)
		}
		if ev.EventType != "lead" || strings.Contains(string(ev.Payload), `\u0000`) || string(ev.Fields) != "{}" {
			t.Fatalf("event type %q, payload %s, fields %s", ev.EventType, ev.Payload, ev.Fields)
		}
	})
	t.Run("no usable identity is rejected with the reason", func(t *testing.T) {
		l := leadFor(t, mapping.Item{Email: "nope", Phone: "42"}, src.Config, now)
		ev, err := l.event("id-2", src, "application/json", now)
		if err != nil {
			t.Fatal(err)
		}
		if ev.Status != models.EventRejected || !strings.Contains(ev.Reason, `email "nope"`) || !strings.Contains(ev.Reason, `phone "42"`) || ev.ProcessedAt == nil {
			t.Fatalf("status %q reason %q", ev.Status, ev.Reason)
		}
	})
	t.Run("an id-only payload awaits hydration", func(t *testing.T) {
		l := leadFor(t, mapping.Item{Hydrate: &mapping.Hydration{Provider: "meta", Object: "leadgen", ID: "1"}}, src.Config, now)
		ev, err := l.event("id-3", src, "application/json", now)
		if err != nil || ev.Status != models.EventPending || len(ev.Hydration) == 0 {
			t.Fatalf("event %+v, %v", ev, err)
		}
	})
}

func TestAnswer(t *testing.T) {
	item := func(status string) models.IngestItem {
		return models.IngestItem{Event: models.Event{Status: status, Reason: "no email or phone in the payload"}}
	}
	one := answer([]models.IngestItem{item(models.EventRejected)}, []models.IngestResult{{EventID: "e1"}})
	want := ItemAnswer{EventID: "e1", Status: "rejected", Reason: "no email or phone in the payload"}
	if one.Status != http.StatusOK || one.Body != want {
		t.Fatalf("rejected answer %+v, want body %+v", one, want)
	}
	queued := answer([]models.IngestItem{item(models.EventPending)}, []models.IngestResult{{EventID: "e1"}})
	if body, err := json.Marshal(queued.Body); err != nil || string(body) != `{"event_id":"e1","status":"queued"}` {
		t.Fatalf("queued answer encodes as %s (%v)", body, err)
	}
	multi := answer([]models.IngestItem{item(models.EventPending), item(models.EventPending)},
		[]models.IngestResult{{EventID: "e1", Duplicate: true}, {EventID: "e2"}})
	b := multi.Body.(map[string]any)
	items := b["events"].([]ItemAnswer)
	if b["status"] != "queued" || len(items) != 2 || items[0].Status != "duplicate" || items[1] != (ItemAnswer{EventID: "e2", Status: "queued"}) {
		t.Fatalf("multi answer %+v", b)
	}
	allDup := answer([]models.IngestItem{item(models.EventPending), item(models.EventPending)},
		[]models.IngestResult{{EventID: "e1", Duplicate: true}, {EventID: "e2", Duplicate: true}})
	if allDup.Body.(map[string]any)["status"] != "duplicate" {
		t.Fatalf("all-duplicate answer %+v", allDup.Body)
	}
}

func TestSourceEntryFresh(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	until := t0.Add(2 * time.Second)
	past := t0.Add(-time.Second)
	cases := []struct {
		name  string
		until *time.Time
		at    time.Duration
		fresh bool
	}{
		{"young entry", nil, time.Second, true},
		{"expired entry", nil, 5 * time.Second, false},
		{"grace still running", &until, time.Second, true},
		{"grace ended since loading", &until, 3 * time.Second, false},
		{"grace had ended before loading", &past, time.Second, true},
	}
	for _, c := range cases {
		e := &sourceEntry{src: models.Source{PreviousSecretUntil: c.until}, fetchedAt: t0}
		if got := e.fresh(t0.Add(c.at), 5*time.Second); got != c.fresh {
			t.Errorf("%s: fresh = %v, want %v", c.name, got, c.fresh)
		}
	}
}

func TestRedisBreaker(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	var b redisBreaker
	if !b.allow(t0) {
		t.Fatal("a new breaker must let Redis be called")
	}
	for _, harmless := range []error{nil, redis.Nil, context.Canceled, fmt.Errorf("mget: %w", context.Canceled)} {
		b.record(harmless, t0)
		if !b.allow(t0) {
			t.Fatalf("%v must not pause Redis", harmless)
		}
	}
	b.record(errors.New("dial tcp 127.0.0.1:6379: connect: connection refused"), t0)
	if b.allow(t0.Add(redisPause - time.Millisecond)) {
		t.Fatal("a failed call must pause Redis")
	}
	if !b.allow(t0.Add(redisPause)) {
		t.Fatal("the pause must end, so Redis is probed again")
	}
}
