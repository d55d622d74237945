package spool

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// openTest opens a spool in dir and closes it when the test ends.
func openTest(t testing.TB, dir string, opts Options) *Spool {
	t.Helper()
	s, err := OpenWith(dir, opts)
	if err != nil {
		t.Fatalf("open spool: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// record makes a record whose id and key derive from n.
func record(n int) Record {
	return Record{
		ID:             fmt.Sprintf("evt-%04d", n),
		WorkspaceID:    1,
		SourceID:       7,
		IdempotencyKey: fmt.Sprintf("key-%04d", n),
		Data:           json.RawMessage(fmt.Sprintf(`{"email":"lead%d@example.com","n":%d}`, n, n)),
	}
}

func records(from, to int) []Record {
	var out []Record
	for n := from; n < to; n++ {
		out = append(out, record(n))
	}
	return out
}

func mustAppend(t testing.TB, s *Spool, recs []Record) {
	t.Helper()
	if err := s.Append(context.Background(), recs); err != nil {
		t.Fatalf("append %d records: %v", len(recs), err)
	}
}

// replayAll drains s and returns the record ids in replay order.
func replayAll(t testing.TB, s *Spool) []string {
	t.Helper()
	var ids []string
	n, err := s.Replay(context.Background(), func(_ context.Context, recs []Record) error {
		for _, r := range recs {
			ids = append(ids, r.ID)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("replay: %v", err)
	}
	if n != len(ids) {
		t.Fatalf("replay reported %d records, handed over %d", n, len(ids))
	}
	return ids
}

func ids(recs []Record) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = r.ID
	}
	return out
}

func segmentFiles(t testing.TB, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*"+segmentExt))
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func fileSize(t testing.TB, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}
