package spool

import (
	"context"
	"errors"
	"os"
	"slices"
	"testing"
	"time"
)

func TestAppendThenReplayHandsRecordsOverInOrder(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir, Options{ReplayBatch: 4})
	mustAppend(t, s, records(0, 3))
	mustAppend(t, s, records(3, 4))
	mustAppend(t, s, records(4, 10))
	if got := s.Pending(); got != 10 {
		t.Fatalf("Pending = %d, want 10", got)
	}

	var got []Record
	var batchSizes []int
	n, err := s.Replay(context.Background(), func(_ context.Context, recs []Record) error {
		batchSizes = append(batchSizes, len(recs))
		got = append(got, recs...)
		return nil
	})
	if err != nil || n != 10 {
		t.Fatalf("Replay = %d, %v; want 10, nil", n, err)
	}
	if !slices.Equal(ids(got), ids(records(0, 10))) {
		t.Fatalf("replayed %v, want %v", ids(got), ids(records(0, 10)))
	}
	if !slices.Equal(batchSizes, []int{4, 4, 2}) {
		t.Errorf("batch sizes %v, want [4 4 2]", batchSizes)
	}
	want := record(5)
	if r := got[5]; r.WorkspaceID != want.WorkspaceID || r.SourceID != want.SourceID ||
		r.IdempotencyKey != want.IdempotencyKey || string(r.Data) != string(want.Data) || r.SpooledAt.IsZero() {
		t.Errorf("record 5 = %+v, want the appended fields and a SpooledAt", r)
	}
	if got := s.Pending(); got != 0 {
		t.Errorf("Pending after replay = %d, want 0", got)
	}
	if _, ok := s.Lookup(1, "key-0005"); ok {
		t.Error("Lookup still finds a replayed key")
	}
	if files := segmentFiles(t, dir); len(files) != 0 {
		t.Errorf("segment files left after a full replay: %v", files)
	}
}

func TestRecordsAndLookupSurviveReopen(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir, Options{})
	at := time.Date(2026, 10, 31, 8, 14, 22, 0, time.UTC)
	first := record(1)
	first.SpooledAt = at
	mustAppend(t, s, []Record{first, record(2)})
	noKey := record(3)
	noKey.IdempotencyKey = ""
	mustAppend(t, s, []Record{noKey})
	if err := s.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}

	s = openTest(t, dir, Options{})
	if got := s.Pending(); got != 3 {
		t.Fatalf("Pending after reopen = %d, want 3", got)
	}
	for _, tc := range []struct {
		workspace int64
		key       string
		wantID    string
		wantOK    bool
	}{
		{1, "key-0001", "evt-0001", true},
		{1, "key-0002", "evt-0002", true},
		{2, "key-0001", "", false}, // keys are per workspace
		{1, "key-0003", "", false}, // record 3 was spooled without a key
		{1, "", "", false},
	} {
		id, ok := s.Lookup(tc.workspace, tc.key)
		if id != tc.wantID || ok != tc.wantOK {
			t.Errorf("Lookup(%d, %q) = %q, %v; want %q, %v", tc.workspace, tc.key, id, ok, tc.wantID, tc.wantOK)
		}
	}
	var got []Record
	if _, err := s.Replay(context.Background(), func(_ context.Context, recs []Record) error {
		got = append(got, recs...)
		return nil
	}); err != nil {
		t.Fatalf("replay: %v", err)
	}
	if !slices.Equal(ids(got), []string{"evt-0001", "evt-0002", "evt-0003"}) {
		t.Fatalf("replayed %v", ids(got))
	}
	if !got[0].SpooledAt.Equal(at) {
		t.Errorf("SpooledAt = %v, want the caller's %v kept", got[0].SpooledAt, at)
	}
}

func TestAppendRejectsBadBatchesWholesale(t *testing.T) {
	s := openTest(t, t.TempDir(), Options{})
	mustAppend(t, s, records(0, 2))

	dup := record(9)
	dup.IdempotencyKey = "key-0001"
	err := s.Append(context.Background(), []Record{record(5), dup})
	var de *DuplicateError
	if !errors.As(err, &de) {
		t.Fatalf("append with a spooled key: err = %v, want *DuplicateError", err)
	}
	if want := []Duplicate{{Index: 1, EventID: "evt-0001"}}; !slices.Equal(de.Duplicates, want) {
		t.Errorf("Duplicates = %+v, want %+v", de.Duplicates, want)
	}

	noID := record(6)
	noID.ID = ""
	badJSON := record(7)
	badJSON.Data = []byte(`{"unterminated":`)
	for name, batch := range map[string][]Record{
		"record without id":          {record(5), noID},
		"key repeated in batch":      {record(5), record(5)},
		"data that is not JSON":      {record(5), badJSON},
		"duplicate of a durable key": {record(1)},
	} {
		if err := s.Append(context.Background(), batch); err == nil {
			t.Errorf("%s: Append succeeded, want an error", name)
		}
	}
	if got := s.Pending(); got != 2 {
		t.Errorf("Pending = %d after rejected batches, want 2 (nothing of them written)", got)
	}
	if _, ok := s.Lookup(1, "key-0005"); ok {
		t.Error("a record of a rejected batch is indexed")
	}
}

func TestReplayFailureKeepsTheRest(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir, Options{ReplayBatch: 2})
	mustAppend(t, s, records(0, 5))

	boom := errors.New("postgres still down")
	calls := 0
	n, err := s.Replay(context.Background(), func(_ context.Context, recs []Record) error {
		calls++
		if calls == 2 {
			return boom
		}
		return nil
	})
	if !errors.Is(err, boom) || n != 2 {
		t.Fatalf("Replay = %d, %v; want 2 and the callback's error", n, err)
	}
	if got := s.Pending(); got != 3 {
		t.Fatalf("Pending = %d, want 3", got)
	}
	if _, ok := s.Lookup(1, "key-0000"); ok {
		t.Error("replayed key still indexed")
	}
	if id, ok := s.Lookup(1, "key-0002"); !ok || id != "evt-0002" {
		t.Errorf("Lookup of a record whose replay failed = %q, %v", id, ok)
	}

	// The progress is durable: a reopened spool resumes after the replayed records.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openTest(t, dir, Options{ReplayBatch: 2})
	if got := s.Pending(); got != 3 {
		t.Fatalf("Pending after reopen = %d, want 3", got)
	}
	if got, want := replayAll(t, s), ids(records(2, 5)); !slices.Equal(got, want) {
		t.Fatalf("replayed %v after reopen, want %v", got, want)
	}
}

func TestReplayStopsWhenContextEnds(t *testing.T) {
	s := openTest(t, t.TempDir(), Options{ReplayBatch: 1})
	mustAppend(t, s, records(0, 3))
	ctx, cancel := context.WithCancel(context.Background())
	n, err := s.Replay(ctx, func(context.Context, []Record) error {
		cancel()
		return nil
	})
	if !errors.Is(err, context.Canceled) || n != 1 {
		t.Fatalf("Replay = %d, %v; want 1, context.Canceled", n, err)
	}
	if got := s.Pending(); got != 2 {
		t.Errorf("Pending = %d, want 2", got)
	}
}

func TestSegmentsRotateAndAreDeletedOnReplay(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir, Options{SegmentBytes: 512, ReplayBatch: 3})
	for n := range 20 {
		mustAppend(t, s, []Record{record(n)})
	}
	if files := segmentFiles(t, dir); len(files) < 3 {
		t.Fatalf("%d segment files for 20 records over 512-byte segments, want several", len(files))
	}
	// Replay drains segment by segment; appends made meanwhile are replayed too.
	var got []string
	extra := 20
	_, err := s.Replay(context.Background(), func(ctx context.Context, recs []Record) error {
		got = append(got, ids(recs)...)
		if extra < 23 {
			if err := s.Append(ctx, []Record{record(extra)}); err != nil {
				return err
			}
			extra++
		}
		return nil
	})
	if err != nil {
		t.Fatalf("replay: %v", err)
	}
	if want := ids(records(0, 23)); !slices.Equal(got, want) {
		t.Fatalf("replayed %v, want %v", got, want)
	}
	if files := segmentFiles(t, dir); len(files) != 0 {
		t.Errorf("segment files left: %v", files)
	}
}

func TestOpenRefusesADirectoryInUse(t *testing.T) {
	dir := t.TempDir()
	openTest(t, dir, Options{})
	if _, err := Open(dir); !errors.Is(err, ErrLocked) {
		t.Fatalf("second Open = %v, want ErrLocked", err)
	}
}

func TestOpenCreatesPrivateDirectory(t *testing.T) {
	dir := t.TempDir() + "/nested/spool"
	openTest(t, dir, Options{})
	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if perm := fi.Mode().Perm(); perm != 0o700 {
		t.Errorf("dir mode %o, want 700", perm)
	}
}

func TestClosedSpoolRefusesWork(t *testing.T) {
	s := openTest(t, t.TempDir(), Options{})
	mustAppend(t, s, records(0, 1))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Append(context.Background(), records(1, 2)); !errors.Is(err, ErrClosed) {
		t.Errorf("Append after Close = %v, want ErrClosed", err)
	}
	if _, err := s.Replay(context.Background(), func(context.Context, []Record) error { return nil }); !errors.Is(err, ErrClosed) {
		t.Errorf("Replay after Close = %v, want ErrClosed", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close = %v, want nil", err)
	}
}
