package models

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// Reporting queries of the web app's pipeline pages: dead-letter depth, the
// sales view (conversion, time in stage, leads by source, stale leads).

// DeadLetterDepth is how many dead letters are open and since when the oldest waits.
type DeadLetterDepth struct {
	Open   int64
	Oldest *time.Time
}

// DeadLetterDepthGet reports the open dead letters of a workspace.
func (s *Store) DeadLetterDepthGet(ctx context.Context, workspaceID int64) (DeadLetterDepth, error) {
	var d DeadLetterDepth
	err := s.db.WithContext(ctx).Raw(`SELECT count(*) AS open, min(created_at) AS oldest FROM dead_letters
		WHERE workspace_id = ? AND status = 'open'`, workspaceID).Scan(&d).Error
	if err != nil {
		return d, fmt.Errorf("models: dead-letter depth: %w", err)
	}
	return d, nil
}

// DeadLetterKinds lists the kinds of a workspace's dead letters, for the filter.
func (s *Store) DeadLetterKinds(ctx context.Context, workspaceID int64) ([]string, error) {
	var out []string
	err := s.db.WithContext(ctx).Raw(`SELECT DISTINCT kind FROM dead_letters WHERE workspace_id = ? ORDER BY kind`, workspaceID).Scan(&out).Error
	if err != nil {
		return nil, fmt.Errorf("models: dead-letter kinds: %w", err)
	}
	return out, nil
}

// StageReach counts contacts by the furthest ordered stage they entered in a
// date range (Rank is 1-based, as given by the stages order passed in).
type StageReach struct {
	Rank     int
	Contacts int64
}

// StageReachList groups the contacts that changed stage in [from, to) by the
// furthest of stages (in that order) they entered; moves into stages not in
// the list (terminal ones) are not counted.
func (s *Store) StageReachList(ctx context.Context, workspaceID int64, stages []string, from, to time.Time) ([]StageReach, error) {
	var out []StageReach
	err := s.db.WithContext(ctx).Raw(`
		SELECT top AS rank, count(*) AS contacts FROM (
			SELECT h.contact_id, max(o.rank) AS top
			FROM stage_history h JOIN jsonb_array_elements_text(?::jsonb) WITH ORDINALITY AS o(stage, rank) ON o.stage = h.to_stage
			WHERE h.workspace_id = ? AND h.occurred_at >= ? AND h.occurred_at < ?
			GROUP BY h.contact_id
		) c GROUP BY top ORDER BY top`, jsonList(stages), workspaceID, from, to).Scan(&out).Error
	if err != nil {
		return nil, fmt.Errorf("models: stage reach: %w", err)
	}
	return out, nil
}

// StageStay summarises the time contacts spent in one stage after entering it.
type StageStay struct {
	Stage         string
	Entries       int64    // entries into the stage in the range
	Left          int64    // of those, how many have left it since
	MedianSeconds *float64 // over the stays that ended; nil when none did
	AvgSeconds    *float64
}

// StageStayList measures, per stage, the stays that began in [from, to): how
// long until the contact's next stage change (stays still open are counted as
// entries but not timed).
func (s *Store) StageStayList(ctx context.Context, workspaceID int64, from, to time.Time) ([]StageStay, error) {
	var out []StageStay
	err := s.db.WithContext(ctx).Raw(`
		SELECT to_stage AS stage, count(*) AS entries, count(next_at) AS "left",
			percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM next_at - occurred_at)) AS median_seconds,
			avg(extract(epoch FROM next_at - occurred_at)) AS avg_seconds
		FROM (
			SELECT to_stage, occurred_at, lead(occurred_at) OVER (PARTITION BY contact_id ORDER BY occurred_at, id) AS next_at
			FROM stage_history WHERE workspace_id = ?
		) h
		WHERE occurred_at >= ? AND occurred_at < ?
		GROUP BY to_stage ORDER BY to_stage`, workspaceID, from, to).Scan(&out).Error
	if err != nil {
		return nil, fmt.Errorf("models: time in stage: %w", err)
	}
	return out, nil
}

// LeadsBySource is one source and channel's share of new leads and activity.
type LeadsBySource struct {
	SourceID   int64
	SourceName string
	Channel    string
	NewLeads   int64 // contacts first seen in the range whose first event came from here
	Events     int64 // events received in the range
	Contacts   int64 // distinct contacts those events touched
}

// LeadsBySourceList reports new leads and activity per source and channel in [from, to).
func (s *Store) LeadsBySourceList(ctx context.Context, workspaceID int64, from, to time.Time) ([]LeadsBySource, error) {
	var out []LeadsBySource
	err := s.db.WithContext(ctx).Raw(`
		WITH first AS (
			SELECT DISTINCT ON (e.contact_id) e.contact_id, e.source_id, e.channel
			FROM events e JOIN contacts c ON c.id = e.contact_id AND c.merged_into IS NULL
			WHERE e.workspace_id = ? AND c.first_seen_at >= ? AND c.first_seen_at < ?
			ORDER BY e.contact_id, e.occurred_at, e.id
		), fresh AS (
			SELECT source_id, channel, count(*) AS new_leads FROM first GROUP BY 1, 2
		), activity AS (
			SELECT source_id, channel, count(*) AS events, count(DISTINCT contact_id) AS contacts
			FROM events WHERE workspace_id = ? AND received_at >= ? AND received_at < ? GROUP BY 1, 2
		)
		SELECT coalesce(a.source_id, f.source_id) AS source_id, coalesce(s.name, '') AS source_name,
			coalesce(a.channel, f.channel) AS channel, coalesce(f.new_leads, 0) AS new_leads,
			coalesce(a.events, 0) AS events, coalesce(a.contacts, 0) AS contacts
		FROM activity a FULL JOIN fresh f ON f.source_id = a.source_id AND f.channel = a.channel
		LEFT JOIN sources s ON s.id = coalesce(a.source_id, f.source_id)
		ORDER BY new_leads DESC, events DESC, source_name`, workspaceID, from, to, workspaceID, from, to).Scan(&out).Error
	if err != nil {
		return nil, fmt.Errorf("models: leads by source: %w", err)
	}
	return out, nil
}

// StaleLead is a live contact with no activity since LastActivityAt.
type StaleLead struct {
	ID             string
	Email          *string
	Phone          *string
	FirstName      *string
	LastName       *string
	Stage          string
	LastActivityAt time.Time
}

// StaleCount is how many stale contacts a stage holds.
type StaleCount struct {
	Stage    string
	Contacts int64
}

// StaleLeadCounts counts, per stage, the live contacts idle since before
// idleSince, leaving out the stages in skip (terminal ones).
func (s *Store) StaleLeadCounts(ctx context.Context, workspaceID int64, idleSince time.Time, skip []string) ([]StaleCount, error) {
	var out []StaleCount
	err := s.db.WithContext(ctx).Raw(`SELECT stage, count(*) AS contacts FROM contacts
		WHERE workspace_id = ? AND merged_into IS NULL AND erased_at IS NULL AND last_activity_at < ? AND NOT EXISTS (SELECT 1 FROM jsonb_array_elements_text(?::jsonb) t WHERE t = stage)
		GROUP BY stage ORDER BY stage`, workspaceID, idleSince, jsonList(skip)).Scan(&out).Error
	if err != nil {
		return nil, fmt.Errorf("models: stale lead counts: %w", err)
	}
	return out, nil
}

// StaleLeadList lists up to limit live contacts idle since before idleSince,
// longest idle first, leaving out the stages in skip.
func (s *Store) StaleLeadList(ctx context.Context, workspaceID int64, idleSince time.Time, skip []string, limit int) ([]StaleLead, error) {
	var out []StaleLead
	err := s.db.WithContext(ctx).Raw(`SELECT id, email, phone, first_name, last_name, stage, last_activity_at FROM contacts
		WHERE workspace_id = ? AND merged_into IS NULL AND erased_at IS NULL AND last_activity_at < ? AND NOT EXISTS (SELECT 1 FROM jsonb_array_elements_text(?::jsonb) t WHERE t = stage)
		ORDER BY last_activity_at, id LIMIT ?`, workspaceID, idleSince, jsonList(skip), limit).Scan(&out).Error
	if err != nil {
		return nil, fmt.Errorf("models: stale leads: %w", err)
	}
	return out, nil
}

// jsonList encodes names as a JSON array for jsonb_array_elements_text: gorm
// expands a Go slice into a parenthesised list, which is no array (and is
// wrong when empty).
func jsonList(names []string) string {
	if names == nil {
		names = []string{}
	}
	b, _ := json.Marshal(names)
	return string(b)
}
