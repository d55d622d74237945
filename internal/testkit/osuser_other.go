//go:build !unix

package testkit

import (
	"os/exec"
)

// osUser is unused where processes cannot switch users.
type osUser struct{}

func postgresOSUser() (*osUser, error) { return nil, nil }

func (u *osUser) own(string) error { return nil }

func (u *osUser) apply(*exec.Cmd) {}
