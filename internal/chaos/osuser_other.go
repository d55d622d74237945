//go:build !unix

package chaos

import (
	"errors"
	"os/exec"
)

type osUser struct{}

func postgresOSUser() (*osUser, error) {
	return nil, errors.New("postgres: throwaway clusters need a unix system")
}
func (u *osUser) own(string) error   { return nil }
func (u *osUser) reach(string) error { return nil }
func (u *osUser) apply(*exec.Cmd)    {}
