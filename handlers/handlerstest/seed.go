package handlerstest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/leadgate/leadgate/models"
)

// SeedSource stores a standard-webhooks source named name.
func (e *Env) SeedSource(name string) models.Source {
	e.T.Helper()
	src := models.Source{WorkspaceID: e.WS.ID, Name: name, Kind: "standard-webhooks", Channel: "web_form",
		SecretEnc: Seal(e.T, e, "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")}
	if err := e.Store.SourceCreate(context.Background(), &src); err != nil {
		e.T.Fatalf("seed source: %v", err)
	}
	return src
}

// Lead is one inbox event seeded for the lifecycle.
type Lead struct {
	Email, Phone, First, Stage, Type string
	At                               time.Time
}

// Apply stores l as a pending event of src and runs the real applier on it,
// as the apply job would; it returns the event id.
func (e *Env) Apply(src models.Source, l Lead) string {
	e.T.Helper()
	ctx := context.Background()
	id := uuid.Must(uuid.NewV7()).String()
	if l.Type == "" {
		l.Type = "form_submitted"
	}
	if l.At.IsZero() {
		l.At = time.Now().UTC()
	}
	ev := models.Event{ID: id, WorkspaceID: src.WorkspaceID, SourceID: src.ID, EventType: l.Type, Channel: src.Channel, OccurredAt: l.At,
		Status: models.EventPending, Payload: json.RawMessage(`{"email":"` + l.Email + `","target_stage":"` + l.Stage + `"}`),
		Fields: json.RawMessage(`{}`), Attribution: json.RawMessage(`{"utm_source":"ads"}`)}
	if l.Email != "" {
		ev.Email = &l.Email
	}
	if l.Phone != "" {
		ev.Phone = &l.Phone
	}
	if l.First != "" {
		ev.FirstName = &l.First
	}
	if l.Stage != "" {
		ev.TargetStage = &l.Stage
	}
	if _, err := e.Store.IngestStore(ctx, []models.IngestItem{{Event: ev, Key: "k-" + id}}, time.Hour); err != nil {
		e.T.Fatalf("store event: %v", err)
	}
	if err := e.App.Applier.Apply(ctx, id); err != nil {
		e.T.Fatalf("apply %s: %v", id, err)
	}
	return id
}

// ContactByEmail finds the live contact with a normalized email.
func (e *Env) ContactByEmail(email string) models.Contact {
	e.T.Helper()
	c, err := e.Store.ContactFindByEmail(context.Background(), e.WS.ID, email)
	if err != nil {
		e.T.Fatalf("contact %s: %v", email, err)
	}
	return c
}

// Conflict seeds a state-conflict dead letter: email reaches SQL, then a
// newer event proposes Discovered. It returns the open dead letter.
func (e *Env) Conflict(src models.Source, email string) models.DeadLetter {
	e.T.Helper()
	now := time.Now().UTC()
	e.Apply(src, Lead{Email: email, Stage: "SQL", At: now.Add(-time.Hour)})
	ev := e.Apply(src, Lead{Email: email, Stage: "Discovered", At: now, Type: "newsletter_signup"})
	list, err := e.Store.DeadLetterList(context.Background(), models.DeadLetterFilter{WorkspaceID: e.WS.ID}, models.Page{Limit: 500})
	if err != nil {
		e.T.Fatal(err)
	}
	for _, d := range list {
		if d.EventID != nil && *d.EventID == ev {
			return d
		}
	}
	e.T.Fatalf("no dead letter for the regressing event %s (dead letters: %+v)", ev, list)
	return models.DeadLetter{}
}

func RequireAudit(t *testing.T, e *Env, action string) {
	t.Helper()
	if got := e.AuditActions(); len(got) == 0 || got[0] != action {
		t.Fatalf("newest audit entry is %v, want %s", got[:min(len(got), 3)], action)
	}
}

// PostHTMX submits a form as htmx does (HX-Request, the CSRF header).
func (c *Client) PostHTMX(path string, form url.Values) Response {
	c.t.Helper()
	if c.CSRF == "" {
		c.Get("/login")
	}
	req, _ := http.NewRequest(http.MethodPost, c.Base+path, bytes.NewBufferString(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("HX-Request", "true")
	req.Header.Set("X-CSRF-Token", c.CSRF)
	return c.Do(req)
}

// APICall sends a JSON request to the workspace API with a new token of role.
func (e *Env) APICall(role, method, path, body string) (int, map[string]any) {
	e.T.Helper()
	_, token, err := e.Store.TokenCreate(context.Background(), "test-"+role, role)
	if err != nil {
		e.T.Fatal(err)
	}
	req, _ := http.NewRequest(method, e.Srv.URL+"/api/v1/workspaces/default"+path, bytes.NewBufferString(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.T.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return resp.StatusCode, out
}

// AuditCount counts the workspace's audit entries with action.
func (e *Env) AuditCount(action string) int {
	n := 0
	for _, a := range e.AuditActions() {
		if a == action {
			n++
		}
	}
	return n
}

// Loop makes one contact loop: a breaker of max applied events, then n more
// changes of the contact; it returns the contact's id.
func (e *Env) Loop(src models.Source, email string, max, n int) string {
	e.T.Helper()
	ctx := context.Background()
	if err := e.Store.GuardSettingsSave(ctx, models.GuardSettings{WorkspaceID: e.WS.ID,
		Loop: models.LoopSettings{BreakerMax: max, BreakerWindowSeconds: 600}}); err != nil {
		e.T.Fatal(err)
	}
	e.Apply(src, Lead{Email: email, First: "v0", Stage: "SQL"})
	for i := 1; i <= max+n; i++ {
		e.Apply(src, Lead{Email: email, First: fmt.Sprintf("v%d", i), Stage: "SQL"})
	}
	return e.ContactByEmail(email).ID
}

func Seal(t *testing.T, e *Env, secret string) []byte {
	t.Helper()
	b, err := e.App.Box.Seal(secret)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
