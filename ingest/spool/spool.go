package spool

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
)

const (
	// DefaultSegmentBytes is the size after which a new segment is started.
	DefaultSegmentBytes = 16 << 20
	// DefaultReplayBatch is how many records Replay hands over per call.
	DefaultReplayBatch = 500
)

// Options tunes a Spool; the zero value gives the defaults.
type Options struct {
	// SegmentBytes is the size after which appends go to a new segment
	// [DefaultSegmentBytes]. A single batch larger than this gets a
	// segment of its own.
	SegmentBytes int64
	// ReplayBatch is the most records handed to one Replay callback
	// [DefaultReplayBatch].
	ReplayBatch int
	// Logger receives recovery warnings [slog.Default()].
	Logger *slog.Logger
}

// Spool is a crash-safe append-only record store in one directory. It is
// safe for concurrent use; one directory is used by one Spool at a time.
type Spool struct {
	dir          string
	segmentBytes int64
	replayBatch  int
	log          *slog.Logger
	lock         *os.File

	// mu guards the fields below it. Lock order: fileMu, then mu.
	mu       sync.Mutex
	closed   bool
	failed   error // set when a failed fsync left the active segment in doubt
	index    map[indexKey]indexEntry
	pending  int
	segments []*segment // pending segments in order, the active one last
	queue    []*appendReq

	// fileMu guards the active segment and nextSeq; it is held while a
	// group of appends is written and fsynced.
	fileMu  sync.Mutex
	active  *activeSegment
	nextSeq uint64

	replayMu sync.Mutex // one Replay at a time

	wake       chan struct{}
	quit       chan struct{}
	writerDone chan struct{}
}

// indexEntry is the event id spooled under an idempotency key; inflight is
// the append still waiting for its fsync, nil once the record is durable.
type indexEntry struct {
	eventID  string
	inflight *appendReq
}

// Open opens the spool in dir with default options; see OpenWith.
func Open(dir string) (*Spool, error) {
	return OpenWith(dir, Options{})
}

// OpenWith creates dir (0700) if needed, takes its lock and recovers the
// segments in it: a torn or corrupted tail (a crash mid-write) is truncated
// away with a warning and every complete batch before it is kept, indexed
// for Lookup and counted in Pending.
func OpenWith(dir string, opts Options) (*Spool, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("spool: open: %w", err)
	}
	lock, err := lockDir(dir)
	if err != nil {
		return nil, err
	}
	s := &Spool{
		dir:          dir,
		segmentBytes: cmp.Or(opts.SegmentBytes, DefaultSegmentBytes),
		replayBatch:  cmp.Or(opts.ReplayBatch, DefaultReplayBatch),
		log:          cmp.Or(opts.Logger, slog.Default()),
		lock:         lock,
		index:        make(map[indexKey]indexEntry),
		wake:         make(chan struct{}, 1),
		quit:         make(chan struct{}),
		writerDone:   make(chan struct{}),
	}
	if err := s.recover(); err != nil {
		_ = lock.Close()
		return nil, fmt.Errorf("spool: open %s: %w", dir, err)
	}
	go s.writeLoop()
	return s, nil
}

// recover rebuilds the in-memory state from the files in s.dir.
func (s *Spool) recover() error {
	_ = os.Remove(filepath.Join(s.dir, checkpointTmp))
	cp, err := readCheckpoint(s.dir)
	if err != nil {
		s.log.Warn("spool: ignoring checkpoint, replaying from the start", "dir", s.dir, "err", err)
	}
	seqs, err := listSegments(s.dir)
	if err != nil {
		return err
	}
	s.nextSeq = cp.seq + 1
	for _, seq := range seqs {
		s.nextSeq = max(s.nextSeq, seq+1)
		start := int64(0)
		switch {
		case seq < cp.seq:
			// Fully replayed; the crash came before its removal.
			if err := removeSegment(s.dir, seq); err != nil {
				return err
			}
			continue
		case seq == cp.seq:
			start = cp.offset
		}
		if err := s.recoverSegment(seq, start); err != nil {
			return err
		}
	}
	return nil
}

// recoverSegment loads one segment's pending records into the index.
func (s *Spool) recoverSegment(seq uint64, start int64) error {
	name := segmentName(seq)
	data, err := os.ReadFile(filepath.Join(s.dir, name))
	if err != nil {
		return fmt.Errorf("read segment: %w", err)
	}
	scan := scanSegment(data)
	if scan.tail != nil {
		s.log.Warn("spool: truncating torn or corrupt segment tail",
			"segment", name, "kept_bytes", scan.validEnd,
			"dropped_bytes", int64(len(data))-scan.validEnd, "reason", scan.tail)
		if err := truncateSegment(s.dir, seq, scan.validEnd); err != nil {
			return err
		}
	}
	count := 0
	for _, r := range scan.records {
		if r.end <= start {
			continue
		}
		count++
		if k, ok := r.rec.indexKey(); ok {
			s.index[k] = indexEntry{eventID: r.rec.ID}
		}
	}
	if count == 0 {
		return removeSegment(s.dir, seq)
	}
	s.pending += count
	s.segments = append(s.segments, &segment{seq: seq, start: start})
	return nil
}

// Lookup reports the event id durably spooled under a workspace's
// idempotency key, so that a sender retrying during an outage is answered
// "duplicate" with the original id. Keys leave the index once replayed.
func (s *Spool) Lookup(workspaceID int64, key string) (eventID string, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, found := s.index[indexKey{workspaceID: workspaceID, key: key}]
	if !found || e.inflight != nil {
		return "", false
	}
	return e.eventID, true
}

// Pending is the number of durable records not yet replayed.
func (s *Spool) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pending
}

// Close finishes the appends already accepted, waits for a running Replay
// and releases the directory. Later calls fail with ErrClosed.
func (s *Spool) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()

	close(s.quit)
	<-s.writerDone
	s.replayMu.Lock()
	defer s.replayMu.Unlock()
	s.fileMu.Lock()
	defer s.fileMu.Unlock()

	var errs []error
	if s.active != nil {
		errs = append(errs, s.active.f.Close())
		s.active = nil
	}
	errs = append(errs, s.lock.Close())
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("spool: close: %w", err)
	}
	return nil
}
