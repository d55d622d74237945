//go:build unix

// Package pguser runs throwaway Postgres clusters (tests, the chaos run) as
// the "postgres" OS account when the caller is root, since Postgres refuses
// to run as root.
package pguser

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"strconv"
	"syscall"
)

// User is the account Postgres runs as; a nil *User means the current one.
type User struct{ uid, gid uint32 }

// Lookup returns the "postgres" account when running as root, else nil.
func Lookup() (*User, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("pguser: running as root needs a postgres OS user: %w", err)
	}
	uid, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("pguser: postgres uid %q: %w", u.Uid, err)
	}
	gid, err := strconv.ParseUint(u.Gid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("pguser: postgres gid %q: %w", u.Gid, err)
	}
	return &User{uid: uint32(uid), gid: uint32(gid)}, nil
}

// Own hands dir to the user.
func (u *User) Own(dir string) error {
	if u == nil {
		return nil
	}
	if err := os.Chown(dir, int(u.uid), int(u.gid)); err != nil {
		return fmt.Errorf("pguser: chown %s to postgres: %w", dir, err)
	}
	return nil
}

// Reach lets the user traverse dir (a parent of a cluster's directory).
func (u *User) Reach(dir string) error {
	if u == nil {
		return nil
	}
	st, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("pguser: %w", err)
	}
	if err := os.Chmod(dir, st.Mode().Perm()|0o011); err != nil {
		return fmt.Errorf("pguser: chmod %s: %w", dir, err)
	}
	return nil
}

// Apply makes cmd run as the user.
func (u *User) Apply(cmd *exec.Cmd) {
	if u == nil {
		return
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: u.uid, Gid: u.gid}}
	cmd.Env = append(os.Environ(), "HOME="+cmd.Dir, "USER=postgres", "LOGNAME=postgres")
}
