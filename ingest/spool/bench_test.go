package spool

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"
)

// BenchmarkAppendParallel measures single-record appends from many
// concurrent writers, the shape of ingest during a Postgres outage; group
// commit shares each fsync among the writers waiting for it.
func BenchmarkAppendParallel(b *testing.B) {
	s := openTest(b, b.TempDir(), Options{})
	data := json.RawMessage(`{"email":"jane.doe@example.com","phone":"+14155550134","fields":{"budget":"10k"}}`)
	var next atomic.Int64
	b.SetParallelism(16)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			n := next.Add(1)
			r := Record{ID: fmt.Sprintf("evt-%d", n), WorkspaceID: 1, SourceID: 1,
				IdempotencyKey: fmt.Sprintf("key-%d", n), Data: data}
			if err := s.Append(context.Background(), []Record{r}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
