package models

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// DestinationHealth counts a workspace's destinations paused by an auth
// failure and the age of its oldest queued sync item (known is false when
// nothing is queued).
func (s *Store) DestinationHealth(ctx context.Context, workspaceID int64) (pausedByAuth int, lag time.Duration, known bool, err error) {
	db := s.db.WithContext(ctx)
	var n int64
	if err := db.Raw(`SELECT count(*) FROM destinations WHERE workspace_id = ? AND paused AND paused_reason LIKE 'auth%' AND deleted_at IS NULL`, workspaceID).Scan(&n).Error; err != nil {
		return 0, 0, false, fmt.Errorf("models: destination health: %w", err)
	}
	var oldest sql.NullTime
	if err := db.Raw(`SELECT min(q.enqueued_at) FROM sync_queue q JOIN destinations d ON d.id = q.destination_id WHERE d.workspace_id = ?`, workspaceID).Scan(&oldest).Error; err != nil {
		return 0, 0, false, fmt.Errorf("models: destination health lag: %w", err)
	}
	if !oldest.Valid {
		return int(n), 0, false, nil
	}
	return int(n), time.Since(oldest.Time), true, nil
}
