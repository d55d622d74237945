package models

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"
)

// groupRow is one event of a group commit, as read by jsonb_to_recordset.
type groupRow struct {
	ID             string          `json:"id"`
	WorkspaceID    int64           `json:"workspace_id"`
	SourceID       int64           `json:"source_id"`
	IdempotencyKey string          `json:"idempotency_key"`
	EventType      string          `json:"event_type"`
	Channel        string          `json:"channel"`
	OccurredAt     time.Time       `json:"occurred_at"`
	ReceivedAt     time.Time       `json:"received_at"`
	Email          *string         `json:"email"`
	EmailRaw       *string         `json:"email_raw"`
	EmailProblem   *string         `json:"email_problem"`
	Phone          *string         `json:"phone"`
	PhoneRaw       *string         `json:"phone_raw"`
	PhoneProblem   *string         `json:"phone_problem"`
	FirstName      *string         `json:"first_name"`
	LastName       *string         `json:"last_name"`
	Company        *string         `json:"company"`
	TargetStage    *string         `json:"target_stage"`
	CurrentStage   *string         `json:"current_stage"`
	Fields         json.RawMessage `json:"fields"`
	Attribution    json.RawMessage `json:"attribution"`
	Hydration      json.RawMessage `json:"hydration"`
	RuleOverrides  json.RawMessage `json:"rule_overrides"`
	Payload        json.RawMessage `json:"payload"`
	ContentType    string          `json:"content_type"`
	Status         string          `json:"status"`
	Reason         string          `json:"reason"`
	Attempts       int             `json:"attempts"`
	ProcessedAt    *time.Time      `json:"processed_at"`
	Spooled        bool            `json:"spooled"`
}

const groupColumns = `id uuid, workspace_id bigint, source_id bigint, idempotency_key text, event_type text, channel text,
	occurred_at timestamptz, received_at timestamptz, email text, email_raw text, email_problem text, phone text,
	phone_raw text, phone_problem text, first_name text, last_name text, company text, target_stage text,
	current_stage text, fields jsonb, attribution jsonb, hydration jsonb, rule_overrides jsonb, payload jsonb,
	content_type text, status text, reason text, attempts int, processed_at timestamptz, spooled boolean`

// The group statements read their results from the connection directly: GORM's Scan renders every
// statement with its arguments as text for its logger (ExplainSQL) even when logging is off (~8 KB and a
// regexp pass per delivery with a group's JSON document), and Find reflects over each row.

// ingestGroupSQL claims every key and inserts the events whose claim won, in one statement: one round trip
// and one commit for the whole group. Keys are claimed in (workspace, key) order so that two groups racing
// on the same keys (two replicas) wait on each other in the same order instead of deadlocking; a key that
// appears twice in one group is claimed by its first row only.
const ingestGroupSQL = `WITH input AS (
		SELECT * FROM jsonb_to_recordset($1::jsonb) AS x(` + groupColumns + `)
	), claim AS (
		INSERT INTO idempotency_keys (workspace_id, key, event_id, source_id)
		SELECT workspace_id, idempotency_key, id, source_id FROM input ORDER BY workspace_id, idempotency_key, id
		ON CONFLICT DO NOTHING RETURNING event_id
	), ins AS (
		INSERT INTO events (id, workspace_id, source_id, idempotency_key, event_type, channel, occurred_at, received_at,
			email, email_raw, email_problem, phone, phone_raw, phone_problem, first_name, last_name, company,
			target_stage, current_stage, fields, attribution, hydration, rule_overrides, payload, content_type,
			status, reason, attempts, processed_at, spooled)
		SELECT i.id, i.workspace_id, i.source_id, i.idempotency_key, i.event_type, i.channel, i.occurred_at, i.received_at,
			i.email, i.email_raw, i.email_problem, i.phone, i.phone_raw, i.phone_problem, i.first_name, i.last_name, i.company,
			i.target_stage, i.current_stage, COALESCE(i.fields, '{}'::jsonb), COALESCE(i.attribution, '{}'::jsonb), i.hydration,
			i.rule_overrides, i.payload, i.content_type, i.status, i.reason, i.attempts, i.processed_at, i.spooled
		FROM input i JOIN claim c ON c.event_id = i.id
		RETURNING id
	)
	SELECT id::text FROM ins`

// ingestGroupDuplicatesSQL counts the group's duplicates on their keys (n per key, so that concurrent
// duplicates of one key cost one row update) and returns each key's stored event.
const ingestGroupDuplicatesSQL = `WITH d AS (
		SELECT workspace_id, key, count(*) AS n FROM jsonb_to_recordset($1::jsonb) AS x(workspace_id bigint, key text)
		GROUP BY workspace_id, key ORDER BY workspace_id, key
	)
	UPDATE idempotency_keys k SET duplicates = k.duplicates + d.n, last_seen_at = now()
	FROM d WHERE k.workspace_id = d.workspace_id AND k.key = d.key
	RETURNING k.workspace_id, k.key, k.event_id::text`

// ErrGroupUnencodable means an item of a group cannot travel as JSON (a payload that is not a JSON
// document): the caller stores the items one by one instead.
var ErrGroupUnencodable = errors.New("an item cannot be encoded for a group insert")

// IngestStoreGroup stores single-event deliveries of many concurrent requests together (application-level
// group commit). Every item must carry a provider key (not Windowed). The result for items[i] is out[i]:
// a new event, or a duplicate naming the stored event. The events are committed by one statement, so a
// failure stores none of them; the duplicate count is a second statement, run only when there are any.
func (s *Store) IngestStoreGroup(ctx context.Context, items []IngestItem) ([]IngestResult, error) {
	rows := make([]groupRow, len(items))
	for i := range items {
		it := &items[i]
		if it.Windowed {
			return nil, fmt.Errorf("models: store event group: item %d has a windowed key", i)
		}
		ev := &it.Event
		ev.IdempotencyKey = it.Key
		receivedAt(ev)
		rows[i] = groupRow{ID: ev.ID, WorkspaceID: ev.WorkspaceID, SourceID: ev.SourceID, IdempotencyKey: it.Key,
			EventType: ev.EventType, Channel: ev.Channel, OccurredAt: ev.OccurredAt, ReceivedAt: ev.ReceivedAt,
			Email: ev.Email, EmailRaw: ev.EmailRaw, EmailProblem: ev.EmailProblem, Phone: ev.Phone, PhoneRaw: ev.PhoneRaw,
			PhoneProblem: ev.PhoneProblem, FirstName: ev.FirstName, LastName: ev.LastName, Company: ev.Company,
			TargetStage: ev.TargetStage, CurrentStage: ev.CurrentStage, Fields: jsonOrNil(ev.Fields),
			Attribution: jsonOrNil(ev.Attribution), Hydration: jsonOrNil(ev.Hydration), RuleOverrides: jsonOrNil(ev.RuleOverrides),
			Payload: jsonOrNil(ev.Payload), ContentType: ev.ContentType, Status: ev.Status, Reason: ev.Reason,
			Attempts: ev.Attempts, ProcessedAt: ev.ProcessedAt, Spooled: ev.Spooled}
	}
	doc, err := json.Marshal(rows)
	if err != nil {
		return nil, fmt.Errorf("models: store event group: %w: %v", ErrGroupUnencodable, err)
	}
	inserted, err := s.groupInserted(ctx, doc)
	if err != nil {
		return nil, fmt.Errorf("models: store event group of %d: %w", len(items), err)
	}
	won := make(map[string]bool, len(inserted))
	for _, id := range inserted {
		won[id] = true
	}
	out := make([]IngestResult, len(items))
	type dupKey struct {
		WorkspaceID int64  `json:"workspace_id"`
		Key         string `json:"key"`
	}
	var dups []dupKey
	for i := range items {
		ev := items[i].Event
		if won[ev.ID] {
			out[i] = IngestResult{EventID: ev.ID}
			continue
		}
		dups = append(dups, dupKey{ev.WorkspaceID, items[i].Key})
	}
	if len(dups) == 0 {
		return out, nil
	}
	sort.Slice(dups, func(a, b int) bool {
		if dups[a].WorkspaceID != dups[b].WorkspaceID {
			return dups[a].WorkspaceID < dups[b].WorkspaceID
		}
		return dups[a].Key < dups[b].Key
	})
	dupDoc, err := json.Marshal(dups)
	if err != nil {
		return nil, fmt.Errorf("models: store event group: encode duplicates: %w", err)
	}
	stored := make(map[dupKey]string, len(dups))
	if err := s.scanRows(ctx, func(rows *sql.Rows) error {
		var k dupKey
		var id string
		if err := rows.Scan(&k.WorkspaceID, &k.Key, &id); err != nil {
			return err
		}
		stored[k] = id
		return nil
	}, ingestGroupDuplicatesSQL, string(dupDoc)); err != nil {
		return nil, fmt.Errorf("models: store event group: count %d duplicates: %w", len(dups), err)
	}
	for i := range items {
		if won[items[i].Event.ID] {
			continue
		}
		id, ok := stored[dupKey{items[i].Event.WorkspaceID, items[i].Key}]
		if !ok {
			return nil, fmt.Errorf("models: store event group: key %q was neither inserted nor found", items[i].Key)
		}
		out[i] = IngestResult{EventID: id, Duplicate: true}
	}
	return out, nil
}

// groupInserted runs the group statement and returns the ids it inserted.
func (s *Store) groupInserted(ctx context.Context, doc []byte) ([]string, error) {
	var inserted []string
	err := s.scanRows(ctx, func(rows *sql.Rows) error {
		var id string
		if err := rows.Scan(&id); err != nil {
			return err
		}
		inserted = append(inserted, id)
		return nil
	}, ingestGroupSQL, string(doc))
	return inserted, err
}

// scanRows runs a statement on the connection (no GORM statement building or reflection: the ingest
// statements run once per group, on the answer path) and hands each row to scan.
func (s *Store) scanRows(ctx context.Context, scan func(*sql.Rows) error, query string, args ...any) error {
	rows, err := s.pool().QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// jsonOrNil keeps an absent JSON document NULL (a json.RawMessage of length 0 would not encode).
func jsonOrNil(b json.RawMessage) json.RawMessage {
	if len(b) == 0 {
		return nil
	}
	return b
}
