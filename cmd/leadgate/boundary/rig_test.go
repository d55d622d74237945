//go:build proof

package boundary

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/leadgate/leadgate/cmd/leadgate/chaos"
	"github.com/leadgate/leadgate/crm/crmfake"
	"github.com/leadgate/leadgate/ingest/signature"
	"github.com/leadgate/leadgate/internal/failpoint"
	"github.com/leadgate/leadgate/internal/testkit"
)

// workspace is every rig's workspace.
const workspace = "boundary"

// Stage rules of every rig: a form proposes Discovered, an email reply Engaged, a Meta lead Discovered;
// a new contact starts an onboarding sequence (the side effect the relay delivers).
var stageRules = map[string]any{
	"stages": []string{"Discovered", "Engaged", "SQL", "Closed Won"}, "allow_skip": true, "allow_regression": false,
	"on_state_conflict": "apply_fields_keep_stage",
	"event_stages":      map[string]string{"form_submitted": "Discovered", "email_replied": "Engaged", "leadgen": "Discovered"},
	"side_effects":      []map[string]string{{"on": "created", "action": "start_onboarding"}},
}

// rig is one leadgate installation under test: its own database, Redis DB, fake CRM (in this process),
// side-effect receiver and fake Graph API, and the real binary serving on them.
type rig struct {
	t     *testing.T
	ctx   context.Context
	fpDir string
	db    *pgxpool.Pool
	crm   *chaos.FakeCRM
	recv  *receiver
	graph *graph
	lg    *chaos.Serve
	hooks map[string]hook
}

// hook is a source's webhook: path, signing secret and kind.
type hook struct {
	path, secret, kind string
	cfg                signature.Config
}

// newRig prepares the installation and starts leadgate with the given failpoints armed (none: nil).
func newRig(t *testing.T, points ...string) *rig {
	t.Helper()
	if testing.Short() {
		t.Skip("runs the leadgate binary")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	dir := t.TempDir()
	r := &rig{t: t, ctx: ctx, fpDir: filepath.Join(dir, "failpoints"), hooks: map[string]hook{},
		recv: newReceiver(t), graph: newGraph(t)}
	dbURL, redisURL := testkit.MigratedDatabase(t), testkit.RedisDB(t)
	pool, err := pgxpool.New(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	r.db = pool
	if r.crm, err = chaos.NewFakeCRM(chaos.FakeCRMOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.crm.Close)
	// Short leases: a send cut by the kill is retried after 3 s instead of 30 s / 2 min.
	r.lg, err = chaos.NewServe(ctx, chaos.ServeOptions{Binary: leadgateBin, Dir: dir, DatabaseURL: dbURL, RedisURL: redisURL, Workers: 4,
		Env: map[string]string{"LEADGATE_FAILPOINT_DIR": r.fpDir, "LEADGATE_SYNC_LEASE": "3s", "LEADGATE_SIDE_EFFECT_LEASE": "3s",
			"LEADGATE_LOG_LEVEL": "info"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		r.lg.Stop()
		if t.Failed() {
			t.Logf("leadgate log (end):\n%s", r.lg.LogTail(60))
		}
	})
	r.start(r.lg, points...)
	r.setup()
	return r
}

// start runs p with points armed.
func (r *rig) start(p *chaos.Serve, points ...string) {
	r.t.Helper()
	var env map[string]string
	if len(points) > 0 {
		env = map[string]string{"LEADGATE_FAILPOINTS": strings.Join(points, ",")}
	}
	if err := p.Start(r.ctx, env); err != nil {
		r.t.Fatalf("start leadgate: %v\n%s", err, p.LogTail(40))
	}
}

// restart stops p gracefully and starts it again with points armed.
func (r *rig) restart(p *chaos.Serve, points ...string) {
	r.t.Helper()
	p.Stop()
	r.start(p, points...)
}

// setup creates the workspace, its rules, the sources, the CRM destination, the side-effect webhook and
// the Meta credentials, through the admin API.
func (r *rig) setup() {
	r.t.Helper()
	r.api(http.MethodPost, "/workspaces", map[string]string{"slug": workspace, "name": "Failure boundaries"}, nil)
	r.api(http.MethodPut, "/workspaces/"+workspace+"/stages", stageRules, nil)
	for name, src := range map[string]map[string]any{
		"form":  {"kind": "standard-webhooks", "channel": "web_form"},
		"email": {"kind": "standard-webhooks", "channel": "cold_email"},
		"meta":  {"kind": "facebook-leads", "channel": "paid_social", "secret": "meta-app-secret-0123456789", "verify_token": "boundary-verify"},
	} {
		src["name"], src["default_region"] = name, "US"
		var out struct {
			IngestURL   string `json:"ingest_url"`
			Secret      string `json:"secret"`
			VerifyToken string `json:"verify_token"`
		}
		r.api(http.MethodPost, "/workspaces/"+workspace+"/sources", src, &out)
		u, err := url.Parse(out.IngestURL)
		if err != nil {
			r.t.Fatalf("ingest url %q: %v", out.IngestURL, err)
		}
		r.hooks[name] = hook{path: u.Path, secret: out.Secret, kind: src["kind"].(string),
			cfg: signature.Config{Secrets: []string{out.Secret}, VerifyToken: out.VerifyToken}}
	}
	info := r.crm.Info()
	r.api(http.MethodPost, "/workspaces/"+workspace+"/destinations", map[string]any{"name": "Fake ActiveCampaign", "kind": "activecampaign",
		"base_url": info.URL, "api_token": info.Token, "stage_field": chaos.StageFieldID, "rate_limit_rps": 20, "batch_size": 20}, nil)
	r.api(http.MethodPut, "/workspaces/"+workspace+"/side-effect-webhook", map[string]any{"url": r.recv.srv.URL, "secret": "se-secret", "enabled": true}, nil)
	r.api(http.MethodPut, "/workspaces/"+workspace+"/hydration-providers/meta", map[string]any{"token": "page-token", "base_url": r.graph.srv.URL}, nil)
}

// api calls the admin API of the main process and fails the test on an error.
func (r *rig) api(method, path string, in, out any) {
	r.t.Helper()
	if err := r.lg.API(r.ctx, method, path, in, out); err != nil {
		r.t.Fatal(err)
	}
}

// send signs body as source's sender would and posts it to p (nil: the main process); it returns the
// accepted event's id.
func (r *rig) send(p *chaos.Serve, source, deliveryID string, body any) string {
	r.t.Helper()
	if p == nil {
		p = r.lg
	}
	h := r.hooks[source]
	b, _ := json.Marshal(body)
	req := signature.Request{Method: http.MethodPost, URL: p.URL() + h.path, Header: http.Header{"Content-Type": {"application/json"}}, Body: b}
	if err := signature.Sign(h.kind, signature.SignConfig{Config: h.cfg, Secret: h.secret, DeliveryID: deliveryID}, &req, time.Now()); err != nil {
		r.t.Fatalf("sign: %v", err)
	}
	hr, _ := http.NewRequestWithContext(r.ctx, http.MethodPost, req.URL, bytes.NewReader(req.Body))
	hr.Header = req.Header
	resp, err := http.DefaultClient.Do(hr)
	if err != nil {
		r.t.Fatalf("webhook %s: %v", source, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out struct {
		Status  string `json:"status"`
		EventID string `json:"event_id"`
		Events  []struct {
			EventID string `json:"event_id"`
		} `json:"events"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(raw, &out) != nil || out.Status != "queued" {
		r.t.Fatalf("webhook %s: %d %s, want 200 queued", source, resp.StatusCode, raw)
	}
	if out.EventID == "" && len(out.Events) == 1 {
		out.EventID = out.Events[0].EventID
	}
	return out.EventID
}

// form is a web form submission (standard payload) occurring at at.
func form(eventType, email, first string, at time.Time, extra map[string]any) map[string]any {
	m := map[string]any{"event_type": eventType, "occurred_at": at.UTC().Format(time.RFC3339Nano), "email": email, "first_name": first}
	for k, v := range extra {
		m[k] = v
	}
	return m
}

// metaLead is Meta's leadgen webhook: only the leadgen id; the lead itself is read from the Graph API.
func metaLead(leadgenID string, at time.Time) map[string]any {
	return map[string]any{"object": "page", "entry": []map[string]any{{"id": "1531253811", "time": at.Unix(),
		"changes": []map[string]any{{"field": "leadgen", "value": map[string]any{"leadgen_id": leadgenID, "page_id": "1531253811",
			"form_id": "5555", "created_time": at.Unix()}}}}}}
}

// waitKilled waits for p to die at point: the process has exited and the point's marker exists.
func (r *rig) waitKilled(p *chaos.Serve, point string) {
	r.t.Helper()
	if err := p.WaitExit(r.ctx, 60*time.Second); err != nil {
		r.t.Fatalf("waiting for the failpoint %s: %v\n%s", point, err, p.LogTail(40))
	}
	if !failpoint.Fired(r.fpDir, point) {
		r.t.Fatalf("leadgate exited but not at %s:\n%s", point, p.LogTail(40))
	}
}

// stats is the workspace's GET /stats.
type stats struct {
	Events struct {
		Accepted, Applied, Unchanged, Quarantined, Unresolved int64
	} `json:"events"`
	DeadLetters   int64 `json:"dead_letters"`
	OutboxPending int64 `json:"outbox_pending"`
}

// settle waits until every event has an outcome, the outbox is empty and done() holds.
func (r *rig) settle(what string, done func() bool) stats {
	r.t.Helper()
	deadline := time.Now().Add(100 * time.Second)
	var s stats
	for {
		err := r.lg.API(r.ctx, http.MethodGet, "/workspaces/"+workspace+"/stats", nil, &s)
		if err == nil && s.Events.Unresolved == 0 && s.OutboxPending == 0 && done() {
			return s
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("not settled within 100 s (%s): stats %+v, err %v", what, s, err)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// contact is leadgate's view of a contact (GET /contacts?email=).
type contact struct {
	ID        string            `json:"id"`
	Email     string            `json:"email"`
	Phone     string            `json:"phone"`
	Stage     string            `json:"stage"`
	FirstName string            `json:"first_name"`
	Fields    map[string]string `json:"fields"`
	Version   int64             `json:"version"`
}

// contacts lists leadgate's contacts with email.
func (r *rig) contacts(email string) []contact {
	r.t.Helper()
	var out struct {
		Contacts []contact `json:"contacts"`
	}
	r.api(http.MethodGet, "/workspaces/"+workspace+"/contacts?email="+url.QueryEscape(email), nil, &out)
	return out.Contacts
}

// only returns the one contact with email, failing the test if there is not exactly one.
func (r *rig) only(email string) contact {
	r.t.Helper()
	cs := r.contacts(email)
	if len(cs) != 1 {
		r.t.Fatalf("leadgate has %d contacts with %s, want exactly 1: %+v", len(cs), email, cs)
	}
	return cs[0]
}

// crmContacts is the fake CRM's account.
func (r *rig) crmContacts() []crmfake.ACContact { return r.crm.AC.Contacts() }

// crmWrites counts the fake CRM's contact writes: creates are requests on a create path (POST
// /api/3/contacts, or /api/3/contact/sync, which ActiveCampaign matches on email), writes all of them.
func (r *rig) crmWrites() (creates, writes int) {
	for _, m := range r.crm.AC.Mutations() {
		writes++
		if m.Method == http.MethodPost && (m.Path == "/api/3/contacts" || m.Path == "/api/3/contact/sync") {
			creates++
		}
	}
	return creates, writes
}

// eventStatus is an event's recorded outcome.
func (r *rig) eventStatus(id string) (status, reason string) {
	r.t.Helper()
	if err := r.db.QueryRow(r.ctx, `SELECT status, coalesce(reason, '') FROM events WHERE id = $1`, id).Scan(&status, &reason); err != nil {
		r.t.Fatalf("event %s: %v", id, err)
	}
	return status, reason
}

// outboxRow is one row of the transactional outbox.
type outboxRow struct {
	StableID, Status string
	Attempts         int
}

func (r *rig) outbox(kind string) []outboxRow {
	r.t.Helper()
	rows, err := r.db.Query(r.ctx, `SELECT stable_id, status, attempts FROM outbox WHERE kind = $1 ORDER BY id`, kind)
	if err != nil {
		r.t.Fatal(err)
	}
	defer rows.Close()
	var out []outboxRow
	for rows.Next() {
		var o outboxRow
		if err := rows.Scan(&o.StableID, &o.Status, &o.Attempts); err != nil {
			r.t.Fatal(err)
		}
		out = append(out, o)
	}
	return out
}

// syncState is what leadgate recorded as delivered to the CRM for a contact (found false: nothing).
func (r *rig) syncState(contactID string) (remoteID string, version int64, found bool) {
	r.t.Helper()
	err := r.db.QueryRow(r.ctx, `SELECT remote_id, last_version FROM sync_state WHERE contact_id = $1 AND synced_at IS NOT NULL`, contactID).Scan(&remoteID, &version)
	if err != nil {
		if strings.Contains(err.Error(), "no rows") {
			return "", 0, false
		}
		r.t.Fatal(err)
	}
	return remoteID, version, true
}

// synced reports whether the CRM has received the contact's latest version.
func (r *rig) synced(contactID string) bool {
	r.t.Helper()
	var ok bool
	err := r.db.QueryRow(r.ctx, `SELECT EXISTS (SELECT 1 FROM contacts c JOIN sync_state s ON s.contact_id = c.id
		WHERE c.id = $1 AND s.last_version = c.version)`, contactID).Scan(&ok)
	if err != nil {
		r.t.Fatal(err)
	}
	return ok
}

// openDeadLetters lists the open dead letters as "kind: reason".
func (r *rig) openDeadLetters() []string {
	r.t.Helper()
	rows, err := r.db.Query(r.ctx, `SELECT kind, reason FROM dead_letters WHERE status = 'open'`)
	if err != nil {
		r.t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var k, why string
		if err := rows.Scan(&k, &why); err != nil {
			r.t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s: %s", k, why))
	}
	return out
}

// contactIDs are leadgate's live contacts with email, read from Postgres (the API may be down).
func (r *rig) contactIDs(email string) []string {
	r.t.Helper()
	rows, err := r.db.Query(r.ctx, `SELECT id::text FROM contacts WHERE email = $1 AND merged_into IS NULL`, email)
	if err != nil {
		r.t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			r.t.Fatal(err)
		}
		out = append(out, id)
	}
	return out
}

// eventEmail is the email an event carries (hydrated or sent); "" when it has none yet.
func (r *rig) eventEmail(id string) string {
	r.t.Helper()
	var email string
	if err := r.db.QueryRow(r.ctx, `SELECT coalesce(email, '') FROM events WHERE id = $1`, id).Scan(&email); err != nil {
		r.t.Fatalf("event %s: %v", id, err)
	}
	return email
}

// resolved reports whether an event status is a final outcome.
func resolved(status string) bool {
	switch status {
	case "applied", "unchanged", "quarantined", "rejected", "dropped":
		return true
	}
	return false
}
