package handlers_test

import (
	"context"
	"encoding/csv"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/leadgate/leadgate/models"
)

func TestUIDashboardFunnelAndDeadLetterDepth(t *testing.T) {
	t.Parallel()
	e := newUIEnv(t)
	src := e.seedSource("Web form")
	c := e.signedIn(models.RoleViewer)
	expectBody(t, "empty funnel", c.get("/w/default/"), "No contacts yet. Each applied lead lands in a stage")

	e.apply(src, lead{email: "a@example.com", stage: "Discovered"})
	e.apply(src, lead{email: "b@example.com", stage: "Discovered"})
	e.conflict(src, "c@example.com") // SQL, plus one open dead letter
	dash := c.get("/w/default/")
	expectStatus(t, "dashboard", dash, http.StatusOK)
	expectBody(t, "dashboard", dash, `data-testid="funnel"`, `data-testid="funnel-Discovered"`, ">2 <tspan", `data-testid="funnel-SQL"`,
		">1 <tspan", "· 67%", `data-testid="kpi-dead-letters"`, "Oldest waiting", `href="/w/default/dead-letters"`)
	frag := c.get("/w/default/health", "HX-Request", "true")
	expectBody(t, "polled fragment", frag, `data-testid="funnel"`)
}

func TestUISalesReport(t *testing.T) {
	t.Parallel()
	e := newUIEnv(t)
	ctx := context.Background()
	src := e.seedSource("Web form")
	voice := e.seedSource("Voice agent")
	now := time.Now().UTC()
	e.apply(src, lead{email: "a@example.com", stage: "Discovered", at: now.Add(-72 * time.Hour)})
	e.apply(src, lead{email: "a@example.com", stage: "Engaged", at: now.Add(-24 * time.Hour)})
	e.apply(src, lead{email: "b@example.com", stage: "Discovered", at: now.Add(-48 * time.Hour)})
	e.apply(voice, lead{email: "c@example.com", stage: "SQL", at: now.Add(-2 * time.Hour)})
	// b has been idle for 20 days.
	if err := e.store.DB().WithContext(ctx).Exec(`UPDATE contacts SET last_activity_at = now() - interval '20 days' WHERE email = 'b@example.com'`).Error; err != nil {
		t.Fatal(err)
	}
	c := e.signedIn(models.RoleViewer)
	res := c.get("/w/default/sales")
	expectStatus(t, "sales", res, http.StatusOK)
	expectBody(t, "sales", res, `data-testid="sales-conversion"`, "3 contacts changed stage in the range",
		`data-testid="sales-sources"`, "Voice agent", `data-testid="sales-stale"`, "b@example.com", "20 days")
	// Discovered reached by 3 (a, b, c went at least that far), Engaged by 2, SQL by 1: 67% then 50%.
	expectBody(t, "conversion rates", res, ">67%<", ">50%<")
	if strings.Contains(res.body, "a@example.com</a>") {
		t.Fatal("an active lead is listed as stale")
	}

	narrow := c.get("/w/default/sales?from=" + now.Add(-30*time.Hour).Format("2006-01-02") + "&to=" + now.Format("2006-01-02") + "&stale_days=30")
	expectBody(t, "narrow range", narrow, `data-testid="sales-no-stale"`)
	bad := c.get("/w/default/sales?from=2026-13-01&to=2020-01-01&stale_days=0")
	expectStatus(t, "bad range", bad, http.StatusOK)
	expectBody(t, "bad range", bad, `data-testid="sales-errors"`, "must be a date", "Stale after must be")
	expectBody(t, "reversed range", c.get("/w/default/sales?from=2026-02-01&to=2026-01-01"), "must not be after")

	before := len(e.auditActions())
	for _, what := range []string{"conversion", "sources", "stale"} {
		res := c.get("/w/default/sales/export.csv?what=" + what)
		expectStatus(t, what+" csv", res, http.StatusOK)
		if !strings.HasPrefix(res.header.Get("Content-Type"), "text/csv") || !strings.Contains(res.header.Get("Content-Disposition"), "default-sales-"+what) {
			t.Fatalf("%s csv headers: %v", what, res.header)
		}
		rows, err := csv.NewReader(strings.NewReader(res.body)).ReadAll()
		if err != nil || len(rows) < 2 {
			t.Fatalf("%s csv: %v %q", what, err, res.body)
		}
		requireAudit(t, e, "sales.export")
	}
	if n := len(e.auditActions()) - before; n != 3 {
		t.Fatalf("3 exports wrote %d audit entries", n)
	}
	expectStatus(t, "unknown csv", c.get("/w/default/sales/export.csv?what=passwords"), http.StatusNotFound)
}

func TestUIQueuesInspector(t *testing.T) {
	t.Parallel()
	e := newUIEnv(t)
	c := e.signedIn(models.RoleAdmin)
	res := c.get("/queues")
	expectStatus(t, "queues", res, http.StatusOK)
	expectBody(t, "queues", res, `data-testid="queues-table"`, `data-testid="queue-apply"`, `data-testid="queue-sync"`, "No archived tasks")

	// Archive two tasks the way asynq does once retries run out.
	in := asynq.NewInspectorFromRedisClient(e.app.Redis)
	var ids []string
	for _, id := range []string{"t-archived-1", "t-archived-2"} {
		if _, err := e.app.Asynq.Enqueue(asynq.NewTask("test:noop", nil), asynq.Queue("maintenance"), asynq.TaskID(id), asynq.ProcessIn(time.Hour)); err != nil {
			t.Fatal(err)
		}
		if err := in.ArchiveTask("maintenance", id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	res = c.get("/queues")
	expectBody(t, "archived", res, `data-testid="tasks-archived"`, "test:noop", "/queues/maintenance/archived/t-archived-1/run")

	expectRedirect(t, "run", c.post("/queues/maintenance/archived/"+ids[0]+"/run", nil), "/queues")
	requireAudit(t, e, "queue.task_run")
	expectRedirect(t, "delete", c.post("/queues/maintenance/archived/"+ids[1]+"/delete", nil), "/queues")
	requireAudit(t, e, "queue.task_delete")
	info, err := in.GetQueueInfo("maintenance")
	if err != nil || info.Archived != 0 || info.Pending != 1 {
		t.Fatalf("maintenance queue after run+delete: %+v %v", info, err)
	}
	expectRedirect(t, "gone", c.post("/queues/maintenance/archived/"+ids[1]+"/delete", nil), "/queues")
	expectBody(t, "gone", c.get("/queues"), "That task is gone")
	expectRedirect(t, "delete all", c.post("/queues/maintenance/archived/delete-all", nil), "/queues")
	requireAudit(t, e, "queue.archived_delete_all")
	expectStatus(t, "bad queue name", c.post("/queues/bad%20name/archived/x/run", nil), http.StatusNotFound)
}
