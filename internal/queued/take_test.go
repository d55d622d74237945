package queued

import (
	"testing"
	"time"
)

func TestTakeStopsAtMaxOrWhenNothingIsWaiting(t *testing.T) {
	cases := []struct {
		name           string
		queued, max    int
		start, wantLen int
	}{
		{"takes everything waiting", 3, 10, 0, 3},
		{"stops at max", 10, 4, 0, 4},
		{"counts what the batch already holds", 10, 4, 1, 4},
		{"nothing waiting", 0, 4, 1, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ch := make(chan int, tc.queued)
			for i := range tc.queued {
				ch <- i
			}
			got := Take(ch, make([]int, tc.start), tc.max)
			if len(got) != tc.wantLen {
				t.Fatalf("len = %d, want %d", len(got), tc.wantLen)
			}
			if left := len(ch); left != tc.queued-(tc.wantLen-tc.start) {
				t.Fatalf("%d left on the channel, want %d", left, tc.queued-(tc.wantLen-tc.start))
			}
		})
	}
}

func TestTakeForWaitsForLateItemsUntilItsTimeIsUp(t *testing.T) {
	ch := make(chan int, 8)
	ch <- 1
	go func() {
		time.Sleep(5 * time.Millisecond)
		ch <- 2
	}()
	got := TakeFor(ch, nil, 4, time.Second/5, nil)
	if len(got) != 2 {
		t.Fatalf("took %v, want the waiting item and the one sent 5 ms later", got)
	}
}

func TestTakeForReturnsAtOnceWhenFull(t *testing.T) {
	ch := make(chan int, 8)
	for i := range 5 {
		ch <- i
	}
	done := make(chan []int)
	go func() { done <- TakeFor(ch, nil, 3, time.Hour, nil) }()
	select {
	case got := <-done:
		if len(got) != 3 || len(ch) != 2 {
			t.Fatalf("took %v with %d left, want 3 taken and 2 left", got, len(ch))
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a full batch waited for its time to be up")
	}
}

func TestTakeForReturnsWhenStopped(t *testing.T) {
	ch := make(chan int)
	stop := make(chan struct{})
	close(stop)
	done := make(chan []int)
	go func() { done <- TakeFor(ch, []int{7}, 3, time.Hour, stop) }()
	select {
	case got := <-done:
		if len(got) != 1 {
			t.Fatalf("took %v, want only what the batch held", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a stopped loop kept waiting")
	}
}
