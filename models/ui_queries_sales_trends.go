package models

import (
	"context"
	"fmt"
	"time"
)

// Trend queries of the sales page. A lead belongs to the source and channel
// of its first event (first touch) and to the ISO week it was first seen.

// firstTouch selects each live contact first seen in [from, to) with the
// source and channel of its first event; it takes workspace, from, to.
const firstTouch = `SELECT DISTINCT ON (e.contact_id) e.contact_id, e.source_id, e.channel, c.first_seen_at, c.stage
	FROM events e JOIN contacts c ON c.id = e.contact_id AND c.merged_into IS NULL
	WHERE e.workspace_id = ? AND c.first_seen_at >= ? AND c.first_seen_at < ?
	ORDER BY e.contact_id, e.occurred_at, e.id`

// WeeklyLeads is how many new leads one source and channel brought in one week.
type WeeklyLeads struct {
	Week       time.Time // Monday 00:00 UTC
	SourceID   int64
	SourceName string
	Channel    string
	NewLeads   int64
}

// WeeklyLeadsList counts new leads per week, source and channel in [from, to).
func (s *Store) WeeklyLeadsList(ctx context.Context, workspaceID int64, from, to time.Time) ([]WeeklyLeads, error) {
	var out []WeeklyLeads
	err := s.db.WithContext(ctx).Raw(`WITH first AS (`+firstTouch+`)
		SELECT date_trunc('week', f.first_seen_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS week, f.source_id,
			coalesce(s.name, '') AS source_name, f.channel, count(*) AS new_leads
		FROM first f LEFT JOIN sources s ON s.id = f.source_id
		GROUP BY 1, 2, 3, 4 ORDER BY 1, 3, 4`, workspaceID, from, to).Scan(&out).Error
	if err != nil {
		return nil, fmt.Errorf("models: weekly new leads: %w", err)
	}
	return out, nil
}

// SourceReach is how many of one source and channel's new leads got at
// least as far as the ordered stage of rank Rank (1-based; 0: none of them).
type SourceReach struct {
	SourceID   int64
	SourceName string
	Channel    string
	Rank       int
	Contacts   int64
}

// SourceReachList groups the new leads of [from, to) by first-touch source
// and channel and by the furthest of stages (in that order) they have ever
// been in, their stage history and current stage both counted.
func (s *Store) SourceReachList(ctx context.Context, workspaceID int64, stages []string, from, to time.Time) ([]SourceReach, error) {
	var out []SourceReach
	err := s.db.WithContext(ctx).Raw(`WITH first AS (`+firstTouch+`), o AS (
			SELECT stage, rank FROM jsonb_array_elements_text(?::jsonb) WITH ORDINALITY AS o(stage, rank)
		), top AS (
			SELECT f.contact_id, f.source_id, f.channel, greatest(
				coalesce((SELECT max(o.rank) FROM stage_history h JOIN o ON o.stage = h.to_stage
					WHERE h.workspace_id = ? AND h.contact_id = f.contact_id), 0),
				coalesce((SELECT o.rank FROM o WHERE o.stage = f.stage), 0)) AS rank
			FROM first f
		)
		SELECT t.source_id, coalesce(s.name, '') AS source_name, t.channel, t.rank, count(*) AS contacts
		FROM top t LEFT JOIN sources s ON s.id = t.source_id
		GROUP BY 1, 2, 3, 4 ORDER BY 2, 3, 4`, workspaceID, from, to, jsonList(stages), workspaceID).Scan(&out).Error
	if err != nil {
		return nil, fmt.Errorf("models: conversion per source: %w", err)
	}
	return out, nil
}

// StageArrival is, for the leads first seen in one week, how many reached a
// stage and the median time from first seen to first entering it.
type StageArrival struct {
	Week          time.Time
	Stage         string
	Contacts      int64
	MedianSeconds float64
}

// StageArrivalList measures time-to-stage per week of first sight in [from, to).
func (s *Store) StageArrivalList(ctx context.Context, workspaceID int64, from, to time.Time) ([]StageArrival, error) {
	var out []StageArrival
	err := s.db.WithContext(ctx).Raw(`
		SELECT date_trunc('week', c.first_seen_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS week, h.to_stage AS stage,
			count(*) AS contacts,
			percentile_cont(0.5) WITHIN GROUP (ORDER BY greatest(extract(epoch FROM h.first_at - c.first_seen_at), 0)) AS median_seconds
		FROM contacts c JOIN (
			SELECT contact_id, to_stage, min(occurred_at) AS first_at FROM stage_history WHERE workspace_id = ? GROUP BY 1, 2
		) h ON h.contact_id = c.id
		WHERE c.workspace_id = ? AND c.merged_into IS NULL AND c.first_seen_at >= ? AND c.first_seen_at < ?
		GROUP BY 1, 2 ORDER BY 1, 2`, workspaceID, workspaceID, from, to).Scan(&out).Error
	if err != nil {
		return nil, fmt.Errorf("models: time to stage: %w", err)
	}
	return out, nil
}
