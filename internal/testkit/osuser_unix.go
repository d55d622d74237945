//go:build unix

package testkit

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"strconv"
	"syscall"
)

// osUser is the account Postgres runs as; nil means the current one.
type osUser struct {
	uid, gid uint32
}

// postgresOSUser returns the "postgres" account when running as root
// (Postgres refuses to run as root), else nil.
func postgresOSUser() (*osUser, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("running as root needs a postgres OS user: %w", err)
	}
	uid, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("postgres uid %q: %w", u.Uid, err)
	}
	gid, err := strconv.ParseUint(u.Gid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("postgres gid %q: %w", u.Gid, err)
	}
	return &osUser{uid: uint32(uid), gid: uint32(gid)}, nil
}

// own hands dir to the user.
func (u *osUser) own(dir string) error {
	if u == nil {
		return nil
	}
	if err := os.Chown(dir, int(u.uid), int(u.gid)); err != nil {
		return fmt.Errorf("chown %s to postgres: %w", dir, err)
	}
	return nil
}

// apply makes cmd run as the user.
func (u *osUser) apply(cmd *exec.Cmd) {
	if u == nil {
		return
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: u.uid, Gid: u.gid}}
	cmd.Env = append(os.Environ(), "HOME="+cmd.Dir, "USER=postgres", "LOGNAME=postgres")
}
