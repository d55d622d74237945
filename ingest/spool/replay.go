package spool

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
)

// ReplayFunc stores records elsewhere (for example INSERT … ON CONFLICT DO
// NOTHING into Postgres). It must be idempotent: after a crash the last
// batch it was handed can be handed over again.
type ReplayFunc func(ctx context.Context, recs []Record) error

// Replay hands pending records to fn in the order they were appended, at
// most Options.ReplayBatch at a time, and forgets each batch (deleting a
// drained segment, or recording progress in the checkpoint, both fsynced)
// only after fn returned nil for it. On the first error it stops and keeps
// every record not yet confirmed. Records appended while Replay runs are
// replayed too. Only one Replay runs at a time.
func (s *Spool) Replay(ctx context.Context, fn func(ctx context.Context, recs []Record) error) (replayed int, err error) {
	s.replayMu.Lock()
	defer s.replayMu.Unlock()
	for {
		segs, err := s.sealForReplay()
		if err != nil {
			return replayed, err
		}
		if len(segs) == 0 {
			return replayed, nil
		}
		for _, seg := range segs {
			n, err := s.replaySegment(ctx, seg, fn)
			replayed += n
			if err != nil {
				return replayed, err
			}
		}
	}
}

// sealForReplay closes the active segment when it holds records, so that
// new appends go to a fresh one, and returns the pending segments that are
// no longer appended to.
func (s *Spool) sealForReplay() ([]segment, error) {
	s.fileMu.Lock()
	defer s.fileMu.Unlock()
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return nil, ErrClosed
	}
	if a := s.active; a != nil && a.size > 0 {
		if err := a.f.Close(); err != nil {
			s.log.Warn("spool: closing segment for replay", "segment", segmentName(a.seq), "err", err)
		}
		s.active = nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var sealed []segment
	for _, seg := range s.segments {
		if s.active != nil && seg.seq == s.active.seq {
			continue
		}
		sealed = append(sealed, *seg)
	}
	return sealed, nil
}

// replaySegment replays one sealed segment from its checkpointed start.
func (s *Spool) replaySegment(ctx context.Context, seg segment, fn ReplayFunc) (int, error) {
	name := segmentName(seg.seq)
	data, err := os.ReadFile(filepath.Join(s.dir, name))
	if err != nil {
		return 0, fmt.Errorf("spool: replay: read segment %s: %w", name, err)
	}
	scan := scanSegment(data)
	if scan.tail != nil {
		return 0, fmt.Errorf("spool: replay: segment %s: %w: %w", name, ErrCorrupt, scan.tail)
	}
	todo := slices.DeleteFunc(scan.records, func(r scannedRecord) bool { return r.end <= seg.start })
	if len(todo) == 0 {
		return 0, s.finishSegment(seg.seq, nil)
	}
	replayed := 0
	for len(todo) > 0 {
		if err := ctx.Err(); err != nil {
			return replayed, fmt.Errorf("spool: replay: %w", err)
		}
		chunk := todo[:min(s.replayBatch, len(todo))]
		recs := make([]Record, len(chunk))
		for i, r := range chunk {
			recs[i] = r.rec
		}
		if err := fn(ctx, recs); err != nil {
			return replayed, fmt.Errorf("spool: replay: %w", err)
		}
		todo = todo[len(chunk):]
		if len(todo) == 0 {
			err = s.finishSegment(seg.seq, recs)
		} else {
			err = s.advanceSegment(seg.seq, chunk[len(chunk)-1].end, recs)
		}
		if err != nil {
			return replayed, err
		}
		replayed += len(recs)
	}
	return replayed, nil
}

// finishSegment deletes a drained segment and forgets its last records.
func (s *Spool) finishSegment(seq uint64, recs []Record) error {
	if err := removeSegment(s.dir, seq); err != nil {
		return fmt.Errorf("spool: replay: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.segments = slices.DeleteFunc(s.segments, func(seg *segment) bool { return seg.seq == seq })
	s.forget(recs)
	return nil
}

// advanceSegment records that seq was replayed up to offset end.
func (s *Spool) advanceSegment(seq uint64, end int64, recs []Record) error {
	if err := writeCheckpoint(s.dir, checkpoint{seq: seq, offset: end}); err != nil {
		return fmt.Errorf("spool: replay: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, seg := range s.segments {
		if seg.seq == seq {
			seg.start = end
		}
	}
	s.forget(recs)
	return nil
}

// forget drops replayed records from the index and the pending count.
// s.mu must be held.
func (s *Spool) forget(recs []Record) {
	s.pending -= len(recs)
	for _, r := range recs {
		k, ok := r.indexKey()
		if !ok {
			continue
		}
		if e, found := s.index[k]; found && e.inflight == nil && e.eventID == r.ID {
			delete(s.index, k)
		}
	}
}
