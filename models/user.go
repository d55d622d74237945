package models

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"
)

// User is a person who logs into the admin web app.
type User struct {
	ID                 int64
	Email              string
	PasswordHash       string
	Role               string
	MustChangePassword bool
	DisabledAt         *time.Time
	LastLoginAt        *time.Time
	LastWorkspace      string // slug of the workspace opened last ("" if none)
	CreatedAt          time.Time
}

// MinPasswordLen is the shortest password accepted.
const MinPasswordLen = 10

// UserCreate adds a user with a bcrypt-hashed password; ErrConflict if the email exists.
func (s *Store) UserCreate(ctx context.Context, email, password, role string, mustChange bool) (User, error) {
	email = strings.ToLower(strings.TrimSpace(email))
	if !strings.Contains(email, "@") {
		return User{}, fmt.Errorf("models: %q is not an email address", email)
	}
	if !ValidRole(role) {
		return User{}, fmt.Errorf("models: role %q is not admin, editor or viewer", role)
	}
	if len(password) < MinPasswordLen {
		return User{}, fmt.Errorf("models: password must be at least %d characters", MinPasswordLen)
	}
	hash, err := s.passwords.hash(password)
	if err != nil {
		return User{}, err
	}
	u := User{Email: email, PasswordHash: hash, Role: role, MustChangePassword: mustChange}
	err = s.db.WithContext(ctx).Select("Email", "PasswordHash", "Role", "MustChangePassword").Create(&u).Error
	if isUniqueViolation(err) {
		return User{}, ErrConflict
	}
	if err != nil {
		return User{}, fmt.Errorf("models: create user: %w", err)
	}
	return u, nil
}

// UserCount returns how many users exist (first start creates an admin when 0).
func (s *Store) UserCount(ctx context.Context) (int64, error) {
	var n int64
	if err := s.db.WithContext(ctx).Model(&User{}).Count(&n).Error; err != nil {
		return 0, fmt.Errorf("models: count users: %w", err)
	}
	return n, nil
}

// UserAuthenticate checks an email and password; ErrNotFound on any mismatch
// (callers must not reveal which part was wrong).
func (s *Store) UserAuthenticate(ctx context.Context, email, password string) (User, error) {
	var u User
	err := s.db.WithContext(ctx).Where("email = ? AND disabled_at IS NULL", strings.ToLower(strings.TrimSpace(email))).Take(&u).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		s.passwords.spendCheck(password)
		return u, ErrNotFound
	}
	if err != nil {
		return u, fmt.Errorf("models: find user: %w", err)
	}
	if !u.PasswordIs(password) {
		return u, ErrNotFound
	}
	s.db.WithContext(ctx).Model(&User{}).Where("id = ?", u.ID).Update("last_login_at", time.Now())
	return u, nil
}

// UserByID returns ErrNotFound for an unknown or disabled user.
func (s *Store) UserByID(ctx context.Context, id int64) (User, error) {
	var u User
	err := s.db.WithContext(ctx).Where("disabled_at IS NULL").Take(&u, id).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return u, ErrNotFound
	}
	if err != nil {
		return u, fmt.Errorf("models: user %d: %w", id, err)
	}
	return u, nil
}

// UserSetLastWorkspace remembers the workspace a user opened last.
func (s *Store) UserSetLastWorkspace(ctx context.Context, id int64, slug string) error {
	if err := s.db.WithContext(ctx).Model(&User{}).Where("id = ?", id).Update("last_workspace", slug).Error; err != nil {
		return fmt.Errorf("models: remember workspace of user %d: %w", id, err)
	}
	return nil
}

// UserList returns all users by email.
func (s *Store) UserList(ctx context.Context) ([]User, error) {
	var out []User
	if err := s.db.WithContext(ctx).Order("email").Find(&out).Error; err != nil {
		return nil, fmt.Errorf("models: list users: %w", err)
	}
	return out, nil
}
