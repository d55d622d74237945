//go:build unix

package chaos

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"strconv"
	"syscall"
)

// osUser is the account Postgres runs as; nil is the current one.
type osUser struct{ uid, gid uint32 }

// postgresOSUser is the "postgres" account when the run is root, else nil.
func postgresOSUser() (*osUser, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("postgres: running as root needs a postgres OS user: %w", err)
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("postgres: bad uid/gid %q/%q", u.Uid, u.Gid)
	}
	return &osUser{uid: uint32(uid), gid: uint32(gid)}, nil
}

func (u *osUser) own(dir string) error {
	if u == nil {
		return nil
	}
	if err := os.Chown(dir, int(u.uid), int(u.gid)); err != nil {
		return fmt.Errorf("postgres: chown %s: %w", dir, err)
	}
	return nil
}

// reach lets the user traverse dir (the run's work dir holds the cluster).
func (u *osUser) reach(dir string) error {
	if u == nil {
		return nil
	}
	st, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	if err := os.Chmod(dir, st.Mode().Perm()|0o011); err != nil {
		return fmt.Errorf("postgres: chmod %s: %w", dir, err)
	}
	return nil
}

func (u *osUser) apply(cmd *exec.Cmd) {
	if u == nil {
		return
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: u.uid, Gid: u.gid}}
	cmd.Env = append(os.Environ(), "HOME="+cmd.Dir, "USER=postgres", "LOGNAME=postgres")
}
