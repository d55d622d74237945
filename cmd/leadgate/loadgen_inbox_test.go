package main

import (
	"bytes"
	"context"
	"io"
	"regexp"
	"sync"
	"testing"
	"time"
)

// The drain watcher ends when the inbox empties, not when the slice it emptied in is over: a drain timed
// to the next 10 s boundary reads as slower than it was.
func TestWatchDrainEndsWhenTheInboxEmpties(t *testing.T) {
	store, dbURL := migratedStore(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := store.DB().Exec(`INSERT INTO events (id, workspace_id, source_id, idempotency_key, occurred_at)
		SELECT gen_random_uuid(), 1, 1, 'k' || i, now() FROM generate_series(1, 3) AS i`).Error; err != nil {
		t.Fatal(err)
	}
	watch, err := openInboxWatch(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer watch.Close()

	var out bytes.Buffer
	started := make(chan struct{})
	w := &firstWrite{w: &out, seen: started}
	done := make(chan error, 1)
	go func() { done <- watch.watchDrain(ctx, w, time.Hour, 10*time.Millisecond) }()
	<-started // the watcher has read the backlog and printed it
	if err := store.DB().Exec(`UPDATE events SET status = 'applied', processed_at = now()`).Error; err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("the watcher did not end when the inbox emptied (an hour's slice): %v\n%s", err, out.String())
	}
	got := out.String()
	for _, want := range []string{`drain: 3 events due, 0 resolved before`, `\(0 left\)`, `drain: 3 events in \d+\.\ds, [\d.]+ events/s`} {
		if !regexp.MustCompile(want).MatchString(got) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
}

// firstWrite passes writes on and closes seen at the first.
type firstWrite struct {
	w    io.Writer
	seen chan struct{}
	once sync.Once
}

func (f *firstWrite) Write(p []byte) (int, error) {
	n, err := f.w.Write(p)
	f.once.Do(func() { close(f.seen) })
	return n, err
}

func TestWatchDrainWithNothingDue(t *testing.T) {
	_, dbURL := migratedStore(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	watch, err := openInboxWatch(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer watch.Close()
	var out bytes.Buffer
	if err := watch.watchDrain(ctx, &out, time.Hour, 10*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if want := "drain: nothing was due\n"; !bytes.HasSuffix(out.Bytes(), []byte(want)) {
		t.Errorf("output %q, want it to end with %q", out.String(), want)
	}
}
