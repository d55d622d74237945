package spool

import (
	"bytes"
	"os"
	"slices"
	"testing"
)

// TestOpenRecoversFromATornTail simulates crashes and disk damage after
// batch A (records 0-1) and batch B (records 2-4) were written to one
// segment, and checks what a reopened spool keeps.
func TestOpenRecoversFromATornTail(t *testing.T) {
	batchA, batchB := ids(records(0, 2)), ids(records(2, 5))
	tests := []struct {
		name   string
		damage func(data []byte, ends []int64) []byte
		want   []string
	}{
		{
			name:   "intact",
			damage: func(d []byte, _ []int64) []byte { return d },
			want:   append(batchA, batchB...),
		},
		{
			name:   "final frame cut short",
			damage: func(d []byte, _ []int64) []byte { return d[:len(d)-5] },
			want:   batchA,
		},
		{
			name:   "final frame header cut short",
			damage: func(d []byte, ends []int64) []byte { return d[:ends[3]+4] },
			want:   batchA,
		},
		{
			name:   "batch missing its final frame",
			damage: func(d []byte, ends []int64) []byte { return d[:ends[3]] },
			want:   batchA,
		},
		{
			name: "checksum mismatch in the final frame",
			damage: func(d []byte, _ []int64) []byte {
				d[len(d)-3] ^= 0x20
				return d
			},
			want: batchA,
		},
		{
			name: "checksum mismatch inside the last batch",
			damage: func(d []byte, ends []int64) []byte {
				d[ends[2]+frameHeaderSize+4] ^= 0x01
				return d
			},
			want: batchA,
		},
		{
			name:   "zero-filled tail after the last batch",
			damage: func(d []byte, _ []int64) []byte { return append(d, make([]byte, 100)...) },
			want:   append(batchA, batchB...),
		},
		{
			name:   "garbage after the last batch",
			damage: func(d []byte, _ []int64) []byte { return append(d, bytes.Repeat([]byte{0xff, 0x13}, 40)...) },
			want:   append(batchA, batchB...),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			s := openTest(t, dir, Options{})
			mustAppend(t, s, records(0, 2))
			mustAppend(t, s, records(2, 5))
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			files := segmentFiles(t, dir)
			if len(files) != 1 {
				t.Fatalf("segment files %v, want one", files)
			}
			data, err := os.ReadFile(files[0])
			if err != nil {
				t.Fatal(err)
			}
			var ends []int64
			for _, r := range scanSegment(data).records {
				ends = append(ends, r.end)
			}
			if err := os.WriteFile(files[0], tc.damage(data, ends), 0o600); err != nil {
				t.Fatal(err)
			}

			s = openTest(t, dir, Options{})
			if got := s.Pending(); got != len(tc.want) {
				t.Fatalf("Pending = %d, want %d", got, len(tc.want))
			}
			wantSize := ends[1]
			if len(tc.want) == 5 {
				wantSize = ends[4]
			}
			if got := fileSize(t, files[0]); got != wantSize {
				t.Errorf("segment is %d bytes after recovery, want %d (torn tail truncated)", got, wantSize)
			}
			if _, ok := s.Lookup(1, "key-0004"); ok != (len(tc.want) == 5) {
				t.Errorf("Lookup of record 4 = %v, want %v", ok, len(tc.want) == 5)
			}

			// The spool keeps working: new records follow the survivors.
			mustAppend(t, s, records(10, 11))
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			s = openTest(t, dir, Options{})
			want := append(slices.Clone(tc.want), "evt-0010")
			if got := replayAll(t, s); !slices.Equal(got, want) {
				t.Fatalf("replayed %v, want %v", got, want)
			}
		})
	}
}

func TestOpenIgnoresAMalformedCheckpoint(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir, Options{})
	mustAppend(t, s, records(0, 3))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir+"/"+checkpointFile, []byte("not a checkpoint"), 0o600); err != nil {
		t.Fatal(err)
	}
	s = openTest(t, dir, Options{})
	if got, want := replayAll(t, s), ids(records(0, 3)); !slices.Equal(got, want) {
		t.Fatalf("replayed %v, want everything (%v): replaying twice is safe, losing is not", got, want)
	}
}
