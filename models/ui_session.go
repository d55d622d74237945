package models

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"time"
)

// Why a sign-in ended (ui_sessions.ended_reason).
const (
	SessionEndedSignOut        = "sign_out"
	SessionEndedEverywhere     = "sign_out_everywhere"
	SessionEndedPasswordChange = "password_change"
)

// UISessionStart records a new sign-in of userID lasting ttl and returns its token, the only copy of
// which goes into the cookie.
func (s *Store) UISessionStart(ctx context.Context, userID int64, now time.Time, ttl time.Duration) (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("models: session token: %w", err)
	}
	token := base64.RawURLEncoding.EncodeToString(b[:])
	err := s.db.WithContext(ctx).Exec(`INSERT INTO ui_sessions (token_hash, user_id, created_at, expires_at) VALUES (?, ?, ?, ?)`,
		sessionHash(token), userID, now, now.Add(ttl)).Error
	if err != nil {
		return "", fmt.Errorf("models: start session of user %d: %w", userID, err)
	}
	return token, nil
}

// UISessionLive reports whether token is a sign-in of userID that has neither ended nor expired at now.
func (s *Store) UISessionLive(ctx context.Context, token string, userID int64, now time.Time) (bool, error) {
	if token == "" {
		return false, nil
	}
	var n int64
	err := s.db.WithContext(ctx).Raw(`SELECT count(*) FROM ui_sessions WHERE token_hash = ? AND user_id = ? AND ended_at IS NULL AND expires_at > ?`,
		sessionHash(token), userID, now).Scan(&n).Error
	if err != nil {
		return false, fmt.Errorf("models: check session of user %d: %w", userID, err)
	}
	return n == 1, nil
}

// UISessionEnd ends one sign-in (sign-out); ending an unknown or ended one is not an error.
func (s *Store) UISessionEnd(ctx context.Context, token string, now time.Time) error {
	if token == "" {
		return nil
	}
	err := s.db.WithContext(ctx).Exec(`UPDATE ui_sessions SET ended_at = ?, ended_reason = ? WHERE token_hash = ? AND ended_at IS NULL`,
		now, SessionEndedSignOut, sessionHash(token)).Error
	if err != nil {
		return fmt.Errorf("models: end session: %w", err)
	}
	return nil
}

// UISessionEndAll ends every live sign-in of userID but the one holding keep ("" ends all) and returns
// how many ended.
func (s *Store) UISessionEndAll(ctx context.Context, userID int64, keep, reason string, now time.Time) (int64, error) {
	res := s.db.WithContext(ctx).Exec(`UPDATE ui_sessions SET ended_at = ?, ended_reason = ? WHERE user_id = ? AND ended_at IS NULL AND token_hash <> ?`,
		now, reason, userID, sessionHash(keep))
	if res.Error != nil {
		return 0, fmt.Errorf("models: end sessions of user %d: %w", userID, res.Error)
	}
	return res.RowsAffected, nil
}

// UISessionsLive counts userID's live sign-ins at now (the account page shows it).
func (s *Store) UISessionsLive(ctx context.Context, userID int64, now time.Time) (int64, error) {
	var n int64
	err := s.db.WithContext(ctx).Raw(`SELECT count(*) FROM ui_sessions WHERE user_id = ? AND ended_at IS NULL AND expires_at > ?`, userID, now).Scan(&n).Error
	if err != nil {
		return 0, fmt.Errorf("models: count sessions of user %d: %w", userID, err)
	}
	return n, nil
}

// UISessionsPrune deletes sign-ins that ended or expired before cutoff.
func (s *Store) UISessionsPrune(ctx context.Context, cutoff time.Time) (int64, error) {
	res := s.db.WithContext(ctx).Exec(`DELETE FROM ui_sessions WHERE expires_at < ? OR ended_at < ?`, cutoff, cutoff)
	if res.Error != nil {
		return 0, fmt.Errorf("models: prune sessions: %w", res.Error)
	}
	return res.RowsAffected, nil
}

// sessionHash is the stored form of a token (hex of its SHA-256).
func sessionHash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}
