package models

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// Roles, most powerful first.
const (
	RoleAdmin  = "admin"
	RoleEditor = "editor"
	RoleViewer = "viewer"
)

// ValidRole reports whether r is one of the three roles.
func ValidRole(r string) bool { return r == RoleAdmin || r == RoleEditor || r == RoleViewer }

// RoleAtLeast reports whether have grants what need requires.
func RoleAtLeast(have, need string) bool {
	rank := map[string]int{RoleViewer: 1, RoleEditor: 2, RoleAdmin: 3}
	return rank[have] >= rank[need] && rank[need] > 0
}

// APIToken is a bearer token for the admin API; only its hash is stored.
type APIToken struct {
	ID         int64
	Name       string
	Role       string
	TokenHash  []byte
	Prefix     string
	CreatedAt  time.Time
	LastUsedAt *time.Time
	RevokedAt  *time.Time
}

// tokenPrefix marks leadgate tokens so secret scanners and humans recognise them.
const tokenPrefix = "lgt_"

// TokenCreate mints a token and returns its plaintext (shown once). With
// workspaceIDs the token is limited to those workspaces (TokenScopeWorkspaces
// resolves and checks them); without, it reaches every workspace.
func (s *Store) TokenCreate(ctx context.Context, name, role string, workspaceIDs ...int64) (APIToken, string, error) {
	if !ValidRole(role) {
		return APIToken{}, "", fmt.Errorf("models: role %q is not admin, editor or viewer", role)
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return APIToken{}, "", fmt.Errorf("models: token entropy: %w", err)
	}
	plain := tokenPrefix + base64.RawURLEncoding.EncodeToString(raw)
	t := APIToken{Name: name, Role: role, TokenHash: hashToken(plain), Prefix: plain[:10]}
	// One transaction: a token whose scope rows failed to insert would reach every workspace.
	err := s.Tx(ctx, func(tx *Store) error {
		if err := tx.db.WithContext(ctx).Select("Name", "Role", "TokenHash", "Prefix").Create(&t).Error; err != nil {
			return fmt.Errorf("models: create token: %w", err)
		}
		return tx.tokenScopeInsert(ctx, t.ID, workspaceIDs)
	})
	if err != nil {
		return APIToken{}, "", err
	}
	return t, plain, nil
}

// TokenAuthenticate returns the live token matching plain, or ErrNotFound.
func (s *Store) TokenAuthenticate(ctx context.Context, plain string) (APIToken, error) {
	var t APIToken
	err := s.db.WithContext(ctx).Where("token_hash = ? AND revoked_at IS NULL", hashToken(plain)).Take(&t).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return t, ErrNotFound
	}
	if err != nil {
		return t, fmt.Errorf("models: authenticate token: %w", err)
	}
	// last_used_at is advisory; a failure to record it must not fail the request.
	if t.LastUsedAt == nil || time.Since(*t.LastUsedAt) > time.Minute {
		s.db.WithContext(ctx).Model(&APIToken{}).Where("id = ?", t.ID).Update("last_used_at", time.Now())
	}
	return t, nil
}

// TokenList returns all tokens, newest first.
func (s *Store) TokenList(ctx context.Context) ([]APIToken, error) {
	var out []APIToken
	if err := s.db.WithContext(ctx).Order("id DESC").Find(&out).Error; err != nil {
		return nil, fmt.Errorf("models: list tokens: %w", err)
	}
	return out, nil
}

// TokenRevoke revokes a token; ErrNotFound when no live token has that id.
func (s *Store) TokenRevoke(ctx context.Context, id int64) error {
	res := s.db.WithContext(ctx).Model(&APIToken{}).Where("id = ? AND revoked_at IS NULL", id).Update("revoked_at", time.Now())
	if res.Error != nil {
		return fmt.Errorf("models: revoke token: %w", res.Error)
	}
	if res.RowsAffected == 0 {
		return ErrNotFound
	}
	return nil
}

func hashToken(plain string) []byte {
	h := sha256.Sum256([]byte(plain))
	return h[:]
}
