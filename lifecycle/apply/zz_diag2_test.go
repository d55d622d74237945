package apply_test

import (
	"fmt"
	"testing"
)

func BenchmarkZZExplain(b *testing.B) {
	e := newEnv(b)
	src := e.source(e.ws, "Web form", "web_form", map[string]string{"form_submitted": "Discovered"})
	ids := benchEvents(b, e, src, 2000, 0)
	applyAll(b, e.applier, ids[:1000], 4)
	e.store.DB().Exec("ANALYZE")
	for _, q := range []struct{ sql string; args []any }{
		{`EXPLAIN ANALYZE SELECT * FROM "contacts" WHERE workspace_id = ? AND merged_into IS NULL AND ((email = ? AND ? <> '') OR (phone = ? AND ? <> '' AND NOT phone_shared)) LIMIT 2`, []any{e.ws, "b000500@bench.test", "b000500@bench.test", "+14150000500", "+14150000500"}},
		{`EXPLAIN ANALYZE SELECT * FROM "events" WHERE (workspace_id = ? AND status IN (?,?,?)) AND (hydration IS NULL OR email IS NOT NULL OR phone IS NOT NULL) AND ((email = ? AND (phone IS NULL OR phone = ?)) OR (phone = ? AND email IS NULL)) ORDER BY occurred_at, received_at, id LIMIT 50`, []any{e.ws, "pending", "waiting", "retrying", "b001500@bench.test", "+14150001500", "+14150001500"}},
	} {
		var lines []string
		e.store.DB().Raw(q.sql, q.args...).Scan(&lines)
		fmt.Println(q.sql[:60])
		for _, l := range lines { fmt.Println("   ", l) }
	}
}
