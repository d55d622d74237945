package spool

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

const (
	checkpointFile = "checkpoint"
	checkpointTmp  = "checkpoint.tmp"
)

// checkpoint records replay progress inside the oldest pending segment:
// every segment before seq is gone, and seq's records ending at or before
// offset were replayed.
type checkpoint struct {
	seq    uint64
	offset int64
}

// readCheckpoint returns the zero checkpoint when none was written. A
// checkpoint that does not parse is ignored with the returned error for
// logging: replaying too much is safe, losing records is not.
func readCheckpoint(dir string) (checkpoint, error) {
	b, err := os.ReadFile(filepath.Join(dir, checkpointFile))
	if errors.Is(err, os.ErrNotExist) {
		return checkpoint{}, nil
	}
	if err != nil {
		return checkpoint{}, fmt.Errorf("read checkpoint: %w", err)
	}
	var cp checkpoint
	if _, err := fmt.Sscanf(string(b), "v1 %d %d\n", &cp.seq, &cp.offset); err != nil || cp.offset < 0 {
		return checkpoint{}, fmt.Errorf("read checkpoint %q: malformed", b)
	}
	return cp, nil
}

// writeCheckpoint replaces the checkpoint atomically and durably.
func writeCheckpoint(dir string, cp checkpoint) error {
	tmp := filepath.Join(dir, checkpointTmp)
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("write checkpoint: %w", err)
	}
	_, werr := fmt.Fprintf(f, "v1 %d %d\n", cp.seq, cp.offset)
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return fmt.Errorf("write checkpoint: %w", werr)
	}
	if err := os.Rename(tmp, filepath.Join(dir, checkpointFile)); err != nil {
		return fmt.Errorf("write checkpoint: %w", err)
	}
	return syncDir(dir)
}
