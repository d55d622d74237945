package syncer_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/leadgate/leadgate/crm/crmfake"
	"github.com/leadgate/leadgate/internal/egress"
	"github.com/leadgate/leadgate/models"
)

// A CRM destination whose base URL is (or resolves to) a loopback, private or metadata address is refused
// when dialing: the CRM listener gets no request, nothing is dead-lettered, and the destination pauses
// with the reason (naming the setting that allows it) and keeps its work, like a rejected token.
// Allowing the host lets the same destination through.
func TestDestinationOnPrivateAddressIsRefusedAtDial(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		baseURL func(port string) string
		allowed []string
		refused bool
	}{
		{"a name resolving to loopback", func(p string) string { return "http://crm.example.com:" + p }, nil, true},
		{"a name resolving to the metadata service", func(p string) string { return "http://meta.example.com:" + p }, nil, true},
		{"a name resolving to 10.x", func(p string) string { return "http://ten.example.com:" + p }, nil, true},
		{"literal loopback", func(p string) string { return "http://127.0.0.1:" + p }, nil, true},
		{"literal metadata service", func(p string) string { return "http://169.254.169.254:" + p }, nil, true},
		{"a name resolving to loopback, allowed by name", func(p string) string { return "http://crm.example.com:" + p }, []string{"crm.example.com"}, false},
		{"literal loopback, allowed by CIDR", func(p string) string { return "http://127.0.0.1:" + p }, []string{"127.0.0.0/8"}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newSyncEnv(t)
			fake := crmfake.NewActiveCampaign(crmfake.ACOptions{Options: crmfake.Options{Token: "ac-token"}, Fields: acFields})
			defer fake.Close()
			g := egress.Outbound(tc.allowed)
			g.Resolver = egress.FixedResolver{"crm.example.com": {"127.0.0.1"}, "meta.example.com": {"169.254.169.254"}, "ten.example.com": {"10.1.2.3"}}
			e.conn.Egress = g
			port := fake.URL[strings.LastIndexByte(fake.URL, ':')+1:]
			d := e.addDestination(models.Destination{Kind: "activecampaign", BaseURL: tc.baseURL(port), RateLimitRPS: 50,
				Config: models.DestinationConfig{StageField: "3"}}, "ac-token")
			c := e.contact("jane@example.com", "Discovered")
			e.pass(d)

			got, _ := e.store.DestinationByID(e.ctx, d.ID)
			if !tc.refused {
				if got.Paused || len(fake.Requests()) == 0 || e.queueRow(d, c.ID).Status == "pending" {
					t.Fatalf("allowed target: paused %v (%s), %d requests, item %s; want it synced", got.Paused, got.PausedReason,
						len(fake.Requests()), e.queueRow(d, c.ID).Status)
				}
				return
			}
			if n := len(fake.Requests()); n != 0 {
				t.Fatalf("the CRM listener got %d requests; the guard must refuse before connecting", n)
			}
			if !got.Paused || !strings.Contains(got.PausedReason, "blocked outbound target") || !strings.Contains(got.PausedReason, egress.AllowSetting) {
				t.Fatalf("paused %v, reason %q; want paused with the guard's reason naming %s", got.Paused, got.PausedReason, egress.AllowSetting)
			}
			if dl := e.count(`SELECT count(*) FROM dead_letters WHERE workspace_id = ?`, e.ws.ID); dl != 0 {
				t.Errorf("dead letters = %d, want 0: the work is held until the destination is fixed", dl)
			}
			if q := e.queueRow(d, c.ID); q.Status != "pending" {
				t.Errorf("item %s, want pending (held)", q.Status)
			}
		})
	}
}

// A side-effect webhook on a private address is refused before any byte is sent and dead-lettered at
// once with the guard's reason: retrying cannot make it allowed.
func TestSideEffectWebhookToPrivateAddressIsDeadLettered(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer srv.Close()
	port := srv.URL[strings.LastIndexByte(srv.URL, ':')+1:]
	for name, url := range map[string]string{
		"literal loopback":             srv.URL + "/hook",
		"a name resolving to loopback": "http://hooks.example.com:" + port + "/hook",
		"the metadata service":         "http://169.254.169.254/latest/meta-data/",
		"localhost":                    "http://localhost:" + port + "/hook",
	} {
		t.Run(name, func(t *testing.T) {
			e := newSyncEnv(t)
			if err := e.store.SideEffectWebhookPut(e.ctx, models.SideEffectWebhook{WorkspaceID: e.ws.ID, URL: url, Enabled: true}); err != nil {
				t.Fatal(err)
			}
			c := e.contact("jane@example.com", "SQL")
			row := e.sideEffect(c.ID, "se:abc:enter:SQL:nurture", "nurture")
			r := e.sideEffectRelay()
			r.Egress = egress.Outbound(nil)
			r.Egress.Resolver = egress.FixedResolver{"hooks.example.com": {"127.0.0.1"}}
			got := e.deliverUntil(r, row.ID, func(r models.OutboxRow) bool { return r.Status != "pending" })
			if got.Status != models.OutboxDead || got.Attempts > 1 {
				t.Fatalf("row %s after %d attempts; want dead at the first", got.Status, got.Attempts)
			}
			if n := e.count(`SELECT count(*) FROM dead_letters WHERE outbox_id = ? AND kind = 'side_effect_failed'
				AND reason LIKE '%blocked outbound target%' AND reason LIKE '%LEADGATE_EGRESS_ALLOWED_HOSTS%'`, row.ID); n != 1 {
				t.Errorf("side_effect_failed dead letters naming the refusal and the setting = %d, want 1", n)
			}
		})
	}
	if hits.Load() != 0 {
		t.Fatalf("the private receiver got %d requests", hits.Load())
	}
}
