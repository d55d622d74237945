package models

import (
	"fmt"
	"sync"

	"golang.org/x/crypto/bcrypt"
)

// passwordHashing is how a Store hashes user passwords: bcrypt at one cost. A stored hash carries its
// own cost, so a changed cost applies to passwords set from then on and every existing one still checks.
type passwordHashing struct {
	cost int

	dummyOnce sync.Once
	dummy     []byte
}

func newPasswordHashing(cost int) *passwordHashing {
	if cost == 0 {
		cost = bcrypt.DefaultCost
	}
	return &passwordHashing{cost: cost}
}

func (p *passwordHashing) hash(password string) (string, error) {
	h, err := bcrypt.GenerateFromPassword([]byte(password), p.cost)
	if err != nil {
		return "", fmt.Errorf("models: hash password: %w", err)
	}
	return string(h), nil
}

// spendCheck costs what checking a real user's password costs, for a sign-in with an unknown email, so
// that the answer's timing does not tell the two apart.
func (p *passwordHashing) spendCheck(password string) {
	p.dummyOnce.Do(func() {
		p.dummy, _ = bcrypt.GenerateFromPassword([]byte("no user has this password"), p.cost)
	})
	_ = bcrypt.CompareHashAndPassword(p.dummy, []byte(password))
}

// PasswordIs reports whether password is the user's.
func (u User) PasswordIs(password string) bool {
	return bcrypt.CompareHashAndPassword([]byte(u.PasswordHash), []byte(password)) == nil
}
