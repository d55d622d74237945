package handlers_test

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

// seedSource stores a standard-webhooks source named name.
func (e *uiEnv) seedSource(name string) models.Source {
	e.t.Helper()
	src := models.Source{WorkspaceID: e.ws.ID, Name: name, Kind: "standard-webhooks", Channel: "web_form",
		SecretEnc: uiSeal(e.t, e, "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")}
	if err := e.store.SourceCreate(context.Background(), &src); err != nil {
		e.t.Fatalf("seed source: %v", err)
	}
	return src
}

// lead is one inbox event seeded for the lifecycle.
type lead struct {
	email, phone, first, stage, typ string
	at                              time.Time
}

// apply stores l as a pending event of src and runs the real applier on it,
// as the apply job would; it returns the event id.
func (e *uiEnv) apply(src models.Source, l lead) string {
	e.t.Helper()
	ctx := context.Background()
	id := uuid.Must(uuid.NewV7()).String()
	if l.typ == "" {
		l.typ = "form_submitted"
	}
	if l.at.IsZero() {
		l.at = time.Now().UTC()
	}
	ev := models.Event{ID: id, WorkspaceID: src.WorkspaceID, SourceID: src.ID, EventType: l.typ, Channel: src.Channel, OccurredAt: l.at,
		Status: models.EventPending, Payload: json.RawMessage(`{"email":"` + l.email + `","target_stage":"` + l.stage + `"}`),
		Fields: json.RawMessage(`{}`), Attribution: json.RawMessage(`{"utm_source":"ads"}`)}
	if l.email != "" {
		ev.Email = &l.email
	}
	if l.phone != "" {
		ev.Phone = &l.phone
	}
	if l.first != "" {
		ev.FirstName = &l.first
	}
	if l.stage != "" {
		ev.TargetStage = &l.stage
	}
	if _, err := e.store.IngestStore(ctx, []models.IngestItem{{Event: ev, Key: "k-" + id}}, time.Hour); err != nil {
		e.t.Fatalf("store event: %v", err)
	}
	if err := e.app.Applier.Apply(ctx, id); err != nil {
		e.t.Fatalf("apply %s: %v", id, err)
	}
	return id
}

// contactByEmail finds the live contact with a normalized email.
func (e *uiEnv) contactByEmail(email string) models.Contact {
	e.t.Helper()
	c, err := e.store.ContactFindByEmail(context.Background(), e.ws.ID, email)
	if err != nil {
		e.t.Fatalf("contact %s: %v", email, err)
	}
	return c
}

// conflict seeds a state-conflict dead letter: email reaches SQL, then a
// newer event proposes Discovered. It returns the open dead letter.
func (e *uiEnv) conflict(src models.Source, email string) models.DeadLetter {
	e.t.Helper()
	now := time.Now().UTC()
	e.apply(src, lead{email: email, stage: "SQL", at: now.Add(-time.Hour)})
	ev := e.apply(src, lead{email: email, stage: "Discovered", at: now, typ: "newsletter_signup"})
	list, err := e.store.DeadLetterList(context.Background(), models.DeadLetterFilter{WorkspaceID: e.ws.ID}, models.Page{Limit: 500})
	if err != nil {
		e.t.Fatal(err)
	}
	for _, d := range list {
		if d.EventID != nil && *d.EventID == ev {
			return d
		}
	}
	e.t.Fatalf("no dead letter for the regressing event %s (dead letters: %+v)", ev, list)
	return models.DeadLetter{}
}

func requireAudit(t *testing.T, e *uiEnv, action string) {
	t.Helper()
	if got := e.auditActions(); len(got) == 0 || got[0] != action {
		t.Fatalf("newest audit entry is %v, want %s", got[:min(len(got), 3)], action)
	}
}

// postHTMX submits a form as htmx does (HX-Request, the CSRF header).
func (c *uiClient) postHTMX(path string, form url.Values) uiResponse {
	c.t.Helper()
	if c.csrf == "" {
		c.get("/login")
	}
	req, _ := http.NewRequest(http.MethodPost, c.base+path, bytes.NewBufferString(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("HX-Request", "true")
	req.Header.Set("X-CSRF-Token", c.csrf)
	return c.do(req)
}

// apiCall sends a JSON request to the workspace API with a new token of role.
func (e *uiEnv) apiCall(role, method, path, body string) (int, map[string]any) {
	e.t.Helper()
	_, token, err := e.store.TokenCreate(context.Background(), "test-"+role, role)
	if err != nil {
		e.t.Fatal(err)
	}
	req, _ := http.NewRequest(method, e.srv.URL+"/api/v1/workspaces/default"+path, bytes.NewBufferString(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return resp.StatusCode, out
}

// auditCount counts the workspace's audit entries with action.
func (e *uiEnv) auditCount(action string) int {
	n := 0
	for _, a := range e.auditActions() {
		if a == action {
			n++
		}
	}
	return n
}

// loop makes one contact loop: a breaker of max applied events, then n more
// changes of the contact; it returns the contact's id.
func (e *uiEnv) loop(src models.Source, email string, max, n int) string {
	e.t.Helper()
	ctx := context.Background()
	if err := e.store.GuardSettingsSave(ctx, models.GuardSettings{WorkspaceID: e.ws.ID,
		Loop: models.LoopSettings{BreakerMax: max, BreakerWindowSeconds: 600}}); err != nil {
		e.t.Fatal(err)
	}
	e.apply(src, lead{email: email, first: "v0", stage: "SQL"})
	for i := 1; i <= max+n; i++ {
		e.apply(src, lead{email: email, first: fmt.Sprintf("v%d", i), stage: "SQL"})
	}
	return e.contactByEmail(email).ID
}

func uiSeal(t *testing.T, e *uiEnv, secret string) []byte {
	t.Helper()
	b, err := e.app.Box.Seal(secret)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
