package spool

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
)

func TestConcurrentAppendsAreAllDurable(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir, Options{SegmentBytes: 8 << 10})
	const writers, perWriter = 16, 40
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Go(func() {
			for i := range perWriter {
				n := w*perWriter + i
				if err := s.Append(context.Background(), []Record{record(n)}); err != nil {
					errs <- fmt.Errorf("writer %d record %d: %w", w, n, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	const total = writers * perWriter
	if got := s.Pending(); got != total {
		t.Fatalf("Pending = %d, want %d", got, total)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s = openTest(t, dir, Options{})
	for n := range total {
		if id, ok := s.Lookup(1, fmt.Sprintf("key-%04d", n)); !ok || id != record(n).ID {
			t.Fatalf("Lookup of record %d after reopen = %q, %v", n, id, ok)
		}
	}
	seen := make(map[string]int)
	for _, id := range replayAll(t, s) {
		seen[id]++
	}
	if len(seen) != total {
		t.Fatalf("replayed %d distinct records, want %d", len(seen), total)
	}
	for id, c := range seen {
		if c != 1 {
			t.Errorf("%s replayed %d times", id, c)
		}
	}
}

// Many deliveries of one key race: exactly one is spooled and every other
// one learns the winner's event id.
func TestConcurrentAppendsOfOneKeySpoolItOnce(t *testing.T) {
	s := openTest(t, t.TempDir(), Options{})
	const racers = 24
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		winners []string
		dupIDs  []string
	)
	for i := range racers {
		wg.Go(func() {
			r := record(1000 + i)
			r.IdempotencyKey = "the-same-delivery"
			err := s.Append(context.Background(), []Record{r})
			mu.Lock()
			defer mu.Unlock()
			var de *DuplicateError
			switch {
			case err == nil:
				winners = append(winners, r.ID)
			case errors.As(err, &de):
				dupIDs = append(dupIDs, de.Duplicates[0].EventID)
			default:
				t.Errorf("racer %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	if len(winners) != 1 {
		t.Fatalf("%d appends succeeded, want exactly 1", len(winners))
	}
	if len(dupIDs) != racers-1 {
		t.Fatalf("%d duplicates, want %d", len(dupIDs), racers-1)
	}
	for _, id := range dupIDs {
		if id != winners[0] {
			t.Errorf("duplicate answered with %s, want the winner %s", id, winners[0])
		}
	}
	if got := s.Pending(); got != 1 {
		t.Errorf("Pending = %d, want 1", got)
	}
}

func TestAppendHonoursCancelledContext(t *testing.T) {
	s := openTest(t, t.TempDir(), Options{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := s.Append(ctx, records(0, 1))
	// Either the fsync won the race or the caller is told it is unconfirmed.
	if err != nil && !errors.Is(err, context.Canceled) {
		t.Fatalf("Append with a cancelled context = %v", err)
	}
}
