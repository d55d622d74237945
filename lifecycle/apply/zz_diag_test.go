package apply_test

import (
	"sort"
	"sync"
	"testing"
	"time"
	"fmt"

	"gorm.io/gorm"
)

func BenchmarkZZDiag(b *testing.B) {
	e := newEnv(b)
	e.saveRules(e.ws, raceRules())
	src := e.source(e.ws, "Web form", "web_form", map[string]string{"form_submitted": "Discovered", "email_replied": "Engaged"})
	ids := benchEvents(b, e, src, b.N, 0)
	var mu sync.Mutex
	tot := map[string]time.Duration{}
	cnt := map[string]int{}
	before := func(db *gorm.DB) { db.InstanceSet("t0", time.Now()) }
	after := func(db *gorm.DB) {
		v, _ := db.InstanceGet("t0")
		t0, _ := v.(time.Time)
		sql := db.Statement.SQL.String()
		if len(sql) > 60 { sql = sql[:60] }
		mu.Lock(); tot[sql] += time.Since(t0); cnt[sql]++; mu.Unlock()
	}
	cb := e.store.DB().Callback()
	cb.Create().Before("*").Register("d:b", before); cb.Create().After("*").Register("d:a", after)
	cb.Query().Before("*").Register("d:b", before); cb.Query().After("*").Register("d:a", after)
	cb.Update().Before("*").Register("d:b", before); cb.Update().After("*").Register("d:a", after)
	cb.Row().Before("*").Register("d:b", before); cb.Row().After("*").Register("d:a", after)
	cb.Raw().Before("*").Register("d:b", before); cb.Raw().After("*").Register("d:a", after)
	b.ResetTimer()
	start := time.Now()
	applyAll(b, e.applier, ids, 1)
	el := time.Since(start)
	type kv struct{ k string; v time.Duration }
	var l []kv
	var sum time.Duration
	for k, v := range tot { l = append(l, kv{k, v}); sum += v }
	sort.Slice(l, func(i, j int) bool { return l[i].v > l[j].v })
	for _, x := range l { fmt.Printf("%8.3fms/ev n=%d  %s\n", float64(x.v.Microseconds())/1000/float64(b.N), cnt[x.k], x.k) }
	fmt.Printf("total %.3f ms/event in statements, %.3f ms/event wall\n", float64(sum.Microseconds())/1000/float64(b.N), float64(el.Microseconds())/1000/float64(b.N))
}
