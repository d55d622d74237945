package ui_test

import (
	"context"
	"encoding/csv"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/leadgate/leadgate/handlers/handlerstest"
	"github.com/leadgate/leadgate/models"
)

func TestUIDashboardFunnelAndDeadLetterDepth(t *testing.T) {
	t.Parallel()
	e := handlerstest.NewEnv(t)
	src := e.SeedSource("Web form")
	c := e.SignedIn(models.RoleViewer)
	handlerstest.ExpectBody(t, "empty funnel", c.Get("/w/default/"), "No contacts yet. Each applied lead lands in a stage")

	e.Apply(src, handlerstest.Lead{Email: "a@example.com", Stage: "Discovered"})
	e.Apply(src, handlerstest.Lead{Email: "b@example.com", Stage: "Discovered"})
	e.Conflict(src, "c@example.com") // SQL, plus one open dead letter
	dash := c.Get("/w/default/")
	handlerstest.ExpectStatus(t, "dashboard", dash, http.StatusOK)
	handlerstest.ExpectBody(t, "dashboard", dash, `data-testid="funnel"`, `data-testid="funnel-Discovered"`, ">2 <tspan", `data-testid="funnel-SQL"`,
		">1 <tspan", "· 67%", `data-testid="kpi-dead-letters"`, "Oldest waiting", `href="/w/default/dead-letters"`)
	frag := c.Get("/w/default/health", "HX-Request", "true")
	handlerstest.ExpectBody(t, "polled fragment", frag, `data-testid="funnel"`)
}

func TestUISalesReport(t *testing.T) {
	t.Parallel()
	e := handlerstest.NewEnv(t)
	ctx := context.Background()
	src := e.SeedSource("Web form")
	voice := e.SeedSource("Voice agent")
	now := time.Now().UTC()
	e.Apply(src, handlerstest.Lead{Email: "a@example.com", Stage: "Discovered", At: now.Add(-72 * time.Hour)})
	e.Apply(src, handlerstest.Lead{Email: "a@example.com", Stage: "Engaged", At: now.Add(-24 * time.Hour)})
	e.Apply(src, handlerstest.Lead{Email: "b@example.com", Stage: "Discovered", At: now.Add(-48 * time.Hour)})
	e.Apply(voice, handlerstest.Lead{Email: "c@example.com", Stage: "SQL", At: now.Add(-2 * time.Hour)})
	// b has been idle for 20 days.
	if err := e.Store.DB().WithContext(ctx).Exec(`UPDATE contacts SET last_activity_at = now() - interval '20 days' WHERE email = 'b@example.com'`).Error; err != nil {
		t.Fatal(err)
	}
	c := e.SignedIn(models.RoleViewer)
	res := c.Get("/w/default/sales")
	handlerstest.ExpectStatus(t, "sales", res, http.StatusOK)
	handlerstest.ExpectBody(t, "sales", res, `data-testid="sales-conversion"`, "3 contacts changed stage in the range",
		`data-testid="sales-sources"`, "Voice agent", `data-testid="sales-stale"`, "b@example.com", "20 days")
	// Discovered reached by 3 (a, b, c went at least that far), Engaged by 2, SQL by 1: 67% then 50%.
	handlerstest.ExpectBody(t, "conversion rates", res, ">67%<", ">50%<")
	if strings.Contains(res.Body, "a@example.com</a>") {
		t.Fatal("an active lead is listed as stale")
	}

	narrow := c.Get("/w/default/sales?from=" + now.Add(-30*time.Hour).Format("2006-01-02") + "&to=" + now.Format("2006-01-02") + "&stale_days=30")
	handlerstest.ExpectBody(t, "narrow range", narrow, `data-testid="sales-no-stale"`)
	bad := c.Get("/w/default/sales?from=2026-13-01&to=2020-01-01&stale_days=0")
	handlerstest.ExpectStatus(t, "bad range", bad, http.StatusOK)
	handlerstest.ExpectBody(t, "bad range", bad, `data-testid="sales-errors"`, "must be a date", "Stale after must be")
	handlerstest.ExpectBody(t, "reversed range", c.Get("/w/default/sales?from=2026-02-01&to=2026-01-01"), "must not be after")

	before := len(e.AuditActions())
	for _, what := range []string{"conversion", "sources", "stale"} {
		res := c.Get("/w/default/sales/export.csv?what=" + what)
		handlerstest.ExpectStatus(t, what+" csv", res, http.StatusOK)
		if !strings.HasPrefix(res.Header.Get("Content-Type"), "text/csv") || !strings.Contains(res.Header.Get("Content-Disposition"), "default-sales-"+what) {
			t.Fatalf("%s csv headers: %v", what, res.Header)
		}
		rows, err := csv.NewReader(strings.NewReader(res.Body)).ReadAll()
		if err != nil || len(rows) < 2 {
			t.Fatalf("%s csv: %v %q", what, err, res.Body)
		}
		handlerstest.RequireAudit(t, e, "sales.export")
	}
	if n := len(e.AuditActions()) - before; n != 3 {
		t.Fatalf("3 exports wrote %d audit entries", n)
	}
	handlerstest.ExpectStatus(t, "unknown csv", c.Get("/w/default/sales/export.csv?what=passwords"), http.StatusNotFound)
}

func TestUIQueuesInspector(t *testing.T) {
	t.Parallel()
	e := handlerstest.NewEnv(t)
	c := e.SignedIn(models.RoleAdmin)
	res := c.Get("/queues")
	handlerstest.ExpectStatus(t, "queues", res, http.StatusOK)
	handlerstest.ExpectBody(t, "queues", res, `data-testid="queues-table"`, `data-testid="queue-apply"`, `data-testid="queue-sync"`, "No archived tasks")

	// Archive two tasks the way asynq does once retries run out.
	in := asynq.NewInspectorFromRedisClient(e.App.Redis)
	var ids []string
	for _, id := range []string{"t-archived-1", "t-archived-2"} {
		if _, err := e.App.Asynq.Enqueue(asynq.NewTask("test:noop", nil), asynq.Queue("maintenance"), asynq.TaskID(id), asynq.ProcessIn(time.Hour)); err != nil {
			t.Fatal(err)
		}
		if err := in.ArchiveTask("maintenance", id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	res = c.Get("/queues")
	handlerstest.ExpectBody(t, "archived", res, `data-testid="tasks-archived"`, "test:noop", "/queues/maintenance/archived/t-archived-1/run")

	handlerstest.ExpectRedirect(t, "run", c.Post("/queues/maintenance/archived/"+ids[0]+"/run", nil), "/queues")
	handlerstest.RequireAudit(t, e, "queue.task_run")
	handlerstest.ExpectRedirect(t, "delete", c.Post("/queues/maintenance/archived/"+ids[1]+"/delete", nil), "/queues")
	handlerstest.RequireAudit(t, e, "queue.task_delete")
	info, err := in.GetQueueInfo("maintenance")
	if err != nil || info.Archived != 0 || info.Pending != 1 {
		t.Fatalf("maintenance queue after run+delete: %+v %v", info, err)
	}
	handlerstest.ExpectRedirect(t, "gone", c.Post("/queues/maintenance/archived/"+ids[1]+"/delete", nil), "/queues")
	handlerstest.ExpectBody(t, "gone", c.Get("/queues"), "That task is gone")
	handlerstest.ExpectRedirect(t, "delete all", c.Post("/queues/maintenance/archived/delete-all", nil), "/queues")
	handlerstest.RequireAudit(t, e, "queue.archived_delete_all")
	handlerstest.ExpectStatus(t, "bad queue name", c.Post("/queues/bad%20name/archived/x/run", nil), http.StatusNotFound)
}
