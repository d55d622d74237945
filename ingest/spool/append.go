package spool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// appendReq is one Append call waiting for the writer. err is set before
// done is closed.
type appendReq struct {
	frames []byte
	keys   []keyedID
	count  int
	done   chan struct{}
	err    error
}

// keyedID is an idempotency key and the event id it is spooled under.
type keyedID struct {
	key     indexKey
	eventID string
}

// Append writes recs as one batch and returns once it is fsynced (and the
// directory too when a new segment was created). The batch is all or
// nothing: after a crash either every record of it is recovered or none.
//
// A record whose idempotency key is already spooled fails the whole batch
// with *DuplicateError; an append racing with another for the same key
// waits for that one's outcome first. Appends from concurrent callers are
// committed together with one fsync.
//
// An error other than *DuplicateError means the batch is not confirmed: it
// may still become durable if ctx ended while the fsync was under way, in
// which case it is replayed like any other record.
func (s *Spool) Append(ctx context.Context, recs []Record) error {
	if len(recs) == 0 {
		return nil
	}
	req, err := newAppendReq(recs, time.Now().UTC())
	if err != nil {
		return fmt.Errorf("spool: append: %w", err)
	}
	if err := s.enqueue(ctx, req, recs); err != nil {
		return err
	}
	select {
	case s.wake <- struct{}{}:
	default: // the writer is already due to look at the queue
	}
	select {
	case <-req.done:
		if req.err != nil {
			return fmt.Errorf("spool: append: %w", req.err)
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("spool: append: waiting for fsync: %w", ctx.Err())
	}
}

// newAppendReq validates and encodes a batch.
func newAppendReq(recs []Record, now time.Time) (*appendReq, error) {
	req := &appendReq{count: len(recs), done: make(chan struct{})}
	seen := make(map[indexKey]bool, len(recs))
	for i, r := range recs {
		if err := r.validate(); err != nil {
			return nil, fmt.Errorf("record %d: %w", i, err)
		}
		if r.SpooledAt.IsZero() {
			r.SpooledAt = now
		}
		if k, ok := r.indexKey(); ok {
			if seen[k] {
				return nil, fmt.Errorf("record %d: idempotency key %q repeated in one batch", i, k.key)
			}
			seen[k] = true
			req.keys = append(req.keys, keyedID{key: k, eventID: r.ID})
		}
		payload, err := json.Marshal(r)
		if err != nil {
			return nil, fmt.Errorf("record %d: encode: %w", i, err)
		}
		if len(payload) > maxRecordBytes {
			return nil, fmt.Errorf("record %d: %d bytes encoded, limit %d", i, len(payload), maxRecordBytes)
		}
		req.frames = appendFrame(req.frames, payload, i < len(recs)-1)
	}
	return req, nil
}

// enqueue reserves the batch's idempotency keys and queues it for the
// writer. A key reserved by an append still in flight makes it wait for
// that append's outcome, so that it never answers "duplicate" for a record
// that then fails to be stored.
func (s *Spool) enqueue(ctx context.Context, req *appendReq, recs []Record) error {
	for {
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return ErrClosed
		}
		if s.failed != nil {
			s.mu.Unlock()
			return fmt.Errorf("spool: append: unusable after an earlier failure: %w", s.failed)
		}
		wait, dups := s.conflicts(recs)
		if wait == nil && len(dups) > 0 {
			s.mu.Unlock()
			return &DuplicateError{Duplicates: dups}
		}
		if wait == nil {
			for _, k := range req.keys {
				s.index[k.key] = indexEntry{eventID: k.eventID, inflight: req}
			}
			s.queue = append(s.queue, req)
			s.mu.Unlock()
			return nil
		}
		s.mu.Unlock()
		select {
		case <-wait.done:
		case <-ctx.Done():
			return fmt.Errorf("spool: append: waiting for a concurrent append of the same key: %w", ctx.Err())
		}
	}
}

// conflicts returns an in-flight append holding one of recs' keys, or else
// the records whose keys are durably spooled. s.mu must be held.
func (s *Spool) conflicts(recs []Record) (wait *appendReq, dups []Duplicate) {
	for i, r := range recs {
		k, ok := r.indexKey()
		if !ok {
			continue
		}
		e, found := s.index[k]
		switch {
		case !found:
		case e.inflight != nil:
			return e.inflight, nil
		default:
			dups = append(dups, Duplicate{Index: i, EventID: e.eventID})
		}
	}
	return nil, dups
}

// writeLoop commits queued appends, one write and one fsync per group,
// until Close; it commits what was accepted before Close, then exits.
func (s *Spool) writeLoop() {
	defer close(s.writerDone)
	for {
		select {
		case <-s.wake:
			s.commitQueued()
		case <-s.quit:
			s.commitQueued()
			return
		}
	}
}

// commitQueued writes every queued append and settles each one.
func (s *Spool) commitQueued() {
	s.mu.Lock()
	group := s.queue
	s.queue = nil
	s.mu.Unlock()
	if len(group) == 0 {
		return
	}

	err := s.writeGroup(group)

	s.mu.Lock()
	var fatal *fatalError
	if errors.As(err, &fatal) {
		s.failed = fatal.err
	}
	for _, req := range group {
		for _, k := range req.keys {
			if err != nil {
				delete(s.index, k.key)
			} else {
				s.index[k.key] = indexEntry{eventID: k.eventID}
			}
		}
		if err == nil {
			s.pending += req.count
		}
	}
	s.mu.Unlock()
	for _, req := range group {
		req.err = err
		close(req.done)
	}
}

// fatalError marks a failure after which the active segment's content is
// unknown (a failed fsync, or a failed write that could not be undone).
type fatalError struct{ err error }

func (e *fatalError) Error() string { return e.err.Error() }
func (e *fatalError) Unwrap() error { return e.err }

// writeGroup appends every batch of group to the active segment, rotating
// first when it would grow past segmentBytes, and fsyncs once.
func (s *Spool) writeGroup(group []*appendReq) error {
	size := 0
	for _, req := range group {
		size += len(req.frames)
	}
	s.fileMu.Lock()
	defer s.fileMu.Unlock()

	if a := s.active; a != nil && a.size > 0 && a.size+int64(size) > s.segmentBytes {
		if err := a.f.Close(); err != nil {
			s.log.Warn("spool: closing full segment", "segment", segmentName(a.seq), "err", err)
		}
		s.active = nil
	}
	if s.active == nil {
		if err := s.openActive(); err != nil {
			return err
		}
	}
	a := s.active
	for _, req := range group {
		if _, err := a.f.Write(req.frames); err != nil {
			return s.undoWrite(a, fmt.Errorf("write: %w", err))
		}
	}
	if err := a.f.Sync(); err != nil {
		return &fatalError{fmt.Errorf("fsync segment %s: %w", segmentName(a.seq), err)}
	}
	a.size += int64(size)
	return nil
}

// undoWrite cuts a partly written group off the active segment so that
// later groups do not follow garbage.
func (s *Spool) undoWrite(a *activeSegment, cause error) error {
	if err := a.f.Truncate(a.size); err != nil {
		return &fatalError{fmt.Errorf("%w; undo: %w", cause, err)}
	}
	return cause
}

// openActive starts a new segment. s.fileMu must be held.
func (s *Spool) openActive() error {
	seq := s.nextSeq
	f, err := createSegment(s.dir, seq)
	if err != nil {
		return err
	}
	s.nextSeq++
	s.active = &activeSegment{seq: seq, f: f}
	s.mu.Lock()
	s.segments = append(s.segments, &segment{seq: seq})
	s.mu.Unlock()
	return nil
}
