package spool

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

const segmentExt = ".seg"

// segment is one pending segment file; start is the offset up to which its
// records were already replayed.
type segment struct {
	seq   uint64
	start int64
}

// activeSegment is the segment currently appended to.
type activeSegment struct {
	seq  uint64
	f    *os.File
	size int64
}

func segmentName(seq uint64) string {
	return fmt.Sprintf("%016x%s", seq, segmentExt)
}

func parseSegmentName(name string) (uint64, bool) {
	hex, ok := strings.CutSuffix(name, segmentExt)
	if !ok || len(hex) != 16 {
		return 0, false
	}
	seq, err := strconv.ParseUint(hex, 16, 64)
	return seq, err == nil
}

// listSegments returns the sequence numbers of dir's segment files, ascending.
func listSegments(dir string) ([]uint64, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("list segments: %w", err)
	}
	var seqs []uint64
	for _, e := range entries {
		if seq, ok := parseSegmentName(e.Name()); ok && e.Type().IsRegular() {
			seqs = append(seqs, seq)
		}
	}
	slices.Sort(seqs)
	return seqs, nil
}

// createSegment creates an empty segment file and makes its directory
// entry durable, so that an fsynced record in it cannot vanish with the
// name.
func createSegment(dir string, seq uint64) (*os.File, error) {
	path := filepath.Join(dir, segmentName(seq))
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("create segment: %w", err)
	}
	if err := syncDir(dir); err != nil {
		_ = f.Close()
		_ = os.Remove(path)
		return nil, fmt.Errorf("create segment: %w", err)
	}
	return f, nil
}

// removeSegment deletes a segment file durably.
func removeSegment(dir string, seq uint64) error {
	if err := os.Remove(filepath.Join(dir, segmentName(seq))); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("remove segment %s: %w", segmentName(seq), err)
	}
	return syncDir(dir)
}

// truncateSegment cuts a segment back to size and fsyncs it.
func truncateSegment(dir string, seq uint64, size int64) error {
	f, err := os.OpenFile(filepath.Join(dir, segmentName(seq)), os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("truncate segment: %w", err)
	}
	defer f.Close()
	if err := f.Truncate(size); err != nil {
		return fmt.Errorf("truncate segment: %w", err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("truncate segment: fsync: %w", err)
	}
	return nil
}

// syncDir fsyncs a directory so that created, renamed or removed entries
// survive a crash.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("fsync dir: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("fsync dir: %w", err)
	}
	return nil
}
