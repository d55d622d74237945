package queued

import "testing"

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
