package models

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// Queries the admin web app needs beyond the API's: account management and
// the pipeline-health dashboard.

// UserGetAny returns a user by id, disabled ones included.
func (s *Store) UserGetAny(ctx context.Context, id int64) (User, error) {
	var u User
	err := s.db.WithContext(ctx).Take(&u, id).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return u, ErrNotFound
	}
	if err != nil {
		return u, fmt.Errorf("models: user %d: %w", id, err)
	}
	return u, nil
}

// UserSetPassword stores a new bcrypt hash and clears must_change_password.
func (s *Store) UserSetPassword(ctx context.Context, id int64, password string) error {
	if len(password) < MinPasswordLen {
		return fmt.Errorf("models: password must be at least %d characters", MinPasswordLen)
	}
	hash, err := s.passwords.hash(password)
	if err != nil {
		return err
	}
	res := s.db.WithContext(ctx).Model(&User{}).Where("id = ?", id).
		Updates(map[string]any{"password_hash": hash, "must_change_password": false})
	if res.Error != nil {
		return fmt.Errorf("models: set password: %w", res.Error)
	}
	if res.RowsAffected == 0 {
		return ErrNotFound
	}
	return nil
}

// UserSetDisabled disables (or re-enables) a user; a disabled user cannot
// sign in and their sessions stop working at the next request.
func (s *Store) UserSetDisabled(ctx context.Context, id int64, disabled bool) error {
	var v any
	if disabled {
		v = gorm.Expr("coalesce(disabled_at, now())")
	}
	res := s.db.WithContext(ctx).Model(&User{}).Where("id = ?", id).Update("disabled_at", v)
	if res.Error != nil {
		return fmt.Errorf("models: disable user: %w", res.Error)
	}
	if res.RowsAffected == 0 {
		return ErrNotFound
	}
	return nil
}

// UserCountActiveAdmins counts admins who can still sign in (the last one
// must not be disabled).
func (s *Store) UserCountActiveAdmins(ctx context.Context) (int64, error) {
	var n int64
	err := s.db.WithContext(ctx).Model(&User{}).Where("role = ? AND disabled_at IS NULL", RoleAdmin).Count(&n).Error
	if err != nil {
		return 0, fmt.Errorf("models: count admins: %w", err)
	}
	return n, nil
}

// TokenGet returns one API token, revoked ones included.
func (s *Store) TokenGet(ctx context.Context, id int64) (APIToken, error) {
	var t APIToken
	err := s.db.WithContext(ctx).Take(&t, id).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return t, ErrNotFound
	}
	if err != nil {
		return t, fmt.Errorf("models: token %d: %w", id, err)
	}
	return t, nil
}

// EventRate is the number of events one source received in one time bucket.
type EventRate struct {
	SourceID int64
	Bucket   time.Time
	N        int64
}

// EventRates counts a workspace's events per source per bucket since since
// (buckets aligned to since), for the dashboard chart.
func (s *Store) EventRates(ctx context.Context, workspaceID int64, since time.Time, bucket time.Duration) ([]EventRate, error) {
	var out []EventRate
	err := s.db.WithContext(ctx).Raw(`
		SELECT source_id, date_bin(make_interval(secs => ?), received_at, ?::timestamptz) AS bucket, count(*) AS n
		FROM events
		WHERE workspace_id = ? AND received_at >= ?
		GROUP BY 1, 2 ORDER BY 2`, bucket.Seconds(), since, workspaceID, since).Scan(&out).Error
	if err != nil {
		return nil, fmt.Errorf("models: event rates: %w", err)
	}
	return out, nil
}

// SourceActivity is when a source last received an event and how many in 24 h.
type SourceActivity struct {
	SourceID  int64
	LastEvent *time.Time
	Last24h   int64
}

// SourceActivityList reports activity for every live source of a workspace.
func (s *Store) SourceActivityList(ctx context.Context, workspaceID int64, now time.Time) (map[int64]SourceActivity, error) {
	var rows []SourceActivity
	err := s.db.WithContext(ctx).Raw(`
		SELECT s.id AS source_id,
			(SELECT max(e.received_at) FROM events e WHERE e.workspace_id = s.workspace_id AND e.source_id = s.id) AS last_event,
			(SELECT count(*) FROM events e WHERE e.workspace_id = s.workspace_id AND e.source_id = s.id AND e.received_at >= ?) AS last24h
		FROM sources s
		WHERE s.workspace_id = ? AND s.deleted_at IS NULL`, now.Add(-24*time.Hour), workspaceID).Scan(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("models: source activity: %w", err)
	}
	out := make(map[int64]SourceActivity, len(rows))
	for _, r := range rows {
		out[r.SourceID] = r
	}
	return out, nil
}
