// Package failpoint lets an operator or a test stop leadgate dead at a named point of its work, to prove
// that a crash exactly there loses nothing and duplicates nothing (issue 7 §5, docs/operations.md
// "Failure boundaries"). A point is armed by configuration (LEADGATE_FAILPOINTS); the first time an armed
// point is reached the process SIGKILLs itself, after leaving a marker file in LEADGATE_FAILPOINT_DIR, so a
// process restarted with the same configuration runs through the point. Unarmed, a point costs a nil
// check: a nil *Set is valid and does nothing.
package failpoint

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// The points, named after where the process stops.
const (
	// SyncAfterCRMAccept: the CRM answered an upsert batch, leadgate has not recorded the outcome.
	SyncAfterCRMAccept = "sync.after_crm_accept"
	// ApplyBeforeCommit: an event's contact changes are computed inside the open transaction.
	ApplyBeforeCommit = "apply.before_commit"
	// ApplyAfterCommit: an event's transaction (contact, outbox rows, outcome) committed; nothing sent yet.
	ApplyAfterCommit = "apply.after_commit"
	// SideEffectBeforeSend: a side effect is claimed from the outbox, not yet sent.
	SideEffectBeforeSend = "side_effect.before_send"
	// SideEffectAfterSend: a side effect was delivered, not yet marked sent.
	SideEffectAfterSend = "side_effect.after_send"
	// HydrateAfterFetch: the provider answered an id-only lead, nothing stored yet.
	HydrateAfterFetch = "hydrate.after_fetch"
	// HydrateAfterStore: the provider's answer is stored on the event, the event not yet applied.
	HydrateAfterStore = "hydrate.after_store"
)

// Names lists every point.
func Names() []string {
	return []string{SyncAfterCRMAccept, ApplyBeforeCommit, ApplyAfterCommit, SideEffectBeforeSend, SideEffectAfterSend,
		HydrateAfterFetch, HydrateAfterStore}
}

// Parse reads a comma-separated list of point names ("" is none) and rejects unknown ones.
func Parse(spec string) ([]string, error) {
	var out []string
	var errs []error
	for _, n := range strings.Split(spec, ",") {
		n = strings.TrimSpace(n)
		switch {
		case n == "":
		case !slices.Contains(Names(), n):
			errs = append(errs, fmt.Errorf("unknown failpoint %q (known: %s)", n, strings.Join(Names(), ", ")))
		case !slices.Contains(out, n):
			out = append(out, n)
		}
	}
	return out, errors.Join(errs...)
}

// Set is the armed points of one process.
type Set struct {
	armed map[string]bool
	dir   string
	log   *slog.Logger
	kill  func() // SIGKILL of this process; replaced only by this package's tests
}

// New arms names, remembering fired points in dir (created if needed). No names: nil, which does nothing.
func New(names []string, dir string, log *slog.Logger) (*Set, error) {
	if len(names) == 0 {
		return nil, nil
	}
	if dir == "" {
		return nil, errors.New("failpoint: a marker directory is required")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("failpoint: marker directory: %w", err)
	}
	s := &Set{armed: map[string]bool{}, dir: dir, log: log, kill: killSelf}
	for _, n := range names {
		s.armed[n] = true
	}
	log.Warn("failpoints armed: this process kills itself the first time it reaches one", "points", strings.Join(names, ","), "dir", dir)
	return s, nil
}

// Hit kills the process if name is armed and has not fired before (no marker file in the directory).
func (s *Set) Hit(name string) {
	if s == nil || !s.armed[name] {
		return
	}
	f, err := os.OpenFile(filepath.Join(s.dir, name), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return // fired before (or the marker cannot be written: never kill twice by accident)
	}
	_, _ = fmt.Fprintf(f, "pid %d at %s\n", os.Getpid(), time.Now().UTC().Format(time.RFC3339Nano))
	_ = f.Sync()
	_ = f.Close()
	s.log.Error("failpoint reached: SIGKILL", "point", name)
	s.kill()
}

// Fired reports whether the point named has fired, by its marker in dir.
func Fired(dir, name string) bool {
	_, err := os.Stat(filepath.Join(dir, name))
	return err == nil
}
