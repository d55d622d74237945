//go:build !unix

package spool

import (
	"fmt"
	"os"
	"path/filepath"
)

// lockDir only holds the LOCK file open where flock is unavailable.
func lockDir(dir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, "LOCK"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("spool: lock: %w", err)
	}
	return f, nil
}
