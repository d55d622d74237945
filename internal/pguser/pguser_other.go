//go:build !unix

// Package pguser runs throwaway Postgres clusters as the "postgres" OS
// account when the caller is root; elsewhere it does nothing.
package pguser

import "os/exec"

// User is unused where processes cannot switch users.
type User struct{}

// Lookup returns nil: the current account is used.
func Lookup() (*User, error) { return nil, nil }

// Own does nothing here.
func (u *User) Own(string) error { return nil }

// Reach does nothing here.
func (u *User) Reach(string) error { return nil }

// Apply does nothing here.
func (u *User) Apply(*exec.Cmd) {}
