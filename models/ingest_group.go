package models

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// groupColumns are a group's events column by column, the parameters of ingestGroupSQL: pgx sends each as
// one binary array, so neither side builds or parses a JSON document of the group, and timestamps and
// numbers travel without a text round trip. JSON columns travel as text and Postgres parses them.
type groupColumns struct {
	id, idempotencyKey, eventType, channel, contentType, status, reason []string
	workspaceID, sourceID                                               []int64
	occurredAt, receivedAt                                              []time.Time
	email, emailRaw, emailProblem, phone, phoneRaw, phoneProblem        []*string
	firstName, lastName, company, targetStage, currentStage             []*string
	fields, attribution, hydration, ruleOverrides, payload              []*string
	attempts                                                            []int32
	processedAt                                                         []*time.Time
	spooled                                                             []bool
}

func newGroupColumns(n int) *groupColumns {
	strs := func() []string { return make([]string, 0, n) }
	ptrs := func() []*string { return make([]*string, 0, n) }
	return &groupColumns{
		id: strs(), idempotencyKey: strs(), eventType: strs(), channel: strs(), contentType: strs(), status: strs(), reason: strs(),
		workspaceID: make([]int64, 0, n), sourceID: make([]int64, 0, n),
		occurredAt: make([]time.Time, 0, n), receivedAt: make([]time.Time, 0, n),
		email: ptrs(), emailRaw: ptrs(), emailProblem: ptrs(), phone: ptrs(), phoneRaw: ptrs(), phoneProblem: ptrs(),
		firstName: ptrs(), lastName: ptrs(), company: ptrs(), targetStage: ptrs(), currentStage: ptrs(),
		fields: ptrs(), attribution: ptrs(), hydration: ptrs(), ruleOverrides: ptrs(), payload: ptrs(),
		attempts: make([]int32, 0, n), processedAt: make([]*time.Time, 0, n), spooled: make([]bool, 0, n),
	}
}

func (c *groupColumns) add(ev *Event, key string) {
	c.id = append(c.id, ev.ID)
	c.workspaceID = append(c.workspaceID, ev.WorkspaceID)
	c.sourceID = append(c.sourceID, ev.SourceID)
	c.idempotencyKey = append(c.idempotencyKey, key)
	c.eventType = append(c.eventType, ev.EventType)
	c.channel = append(c.channel, ev.Channel)
	c.occurredAt = append(c.occurredAt, ev.OccurredAt)
	c.receivedAt = append(c.receivedAt, ev.ReceivedAt)
	c.email = append(c.email, ev.Email)
	c.emailRaw = append(c.emailRaw, ev.EmailRaw)
	c.emailProblem = append(c.emailProblem, ev.EmailProblem)
	c.phone = append(c.phone, ev.Phone)
	c.phoneRaw = append(c.phoneRaw, ev.PhoneRaw)
	c.phoneProblem = append(c.phoneProblem, ev.PhoneProblem)
	c.firstName = append(c.firstName, ev.FirstName)
	c.lastName = append(c.lastName, ev.LastName)
	c.company = append(c.company, ev.Company)
	c.targetStage = append(c.targetStage, ev.TargetStage)
	c.currentStage = append(c.currentStage, ev.CurrentStage)
	c.fields = append(c.fields, jsonText(ev.Fields, "{}"))
	c.attribution = append(c.attribution, jsonText(ev.Attribution, "{}"))
	c.hydration = append(c.hydration, jsonText(ev.Hydration, ""))
	c.ruleOverrides = append(c.ruleOverrides, jsonText(ev.RuleOverrides, ""))
	c.payload = append(c.payload, jsonText(ev.Payload, ""))
	c.contentType = append(c.contentType, ev.ContentType)
	c.status = append(c.status, ev.Status)
	c.reason = append(c.reason, ev.Reason)
	c.attempts = append(c.attempts, int32(ev.Attempts))
	c.processedAt = append(c.processedAt, ev.ProcessedAt)
	c.spooled = append(c.spooled, ev.Spooled)
}

// args are ingestGroupSQL's parameters, in its order.
func (c *groupColumns) args() []any {
	return []any{c.id, c.workspaceID, c.sourceID, c.idempotencyKey, c.eventType, c.channel, c.occurredAt, c.receivedAt,
		c.email, c.emailRaw, c.emailProblem, c.phone, c.phoneRaw, c.phoneProblem, c.firstName, c.lastName, c.company,
		c.targetStage, c.currentStage, c.fields, c.attribution, c.hydration, c.ruleOverrides, c.payload, c.contentType,
		c.status, c.reason, c.attempts, c.processedAt, c.spooled}
}

// The group statements read their results from the connection directly: GORM's Scan renders every
// statement with its arguments as text for its logger (ExplainSQL) even when logging is off, and Find
// reflects over each row.

// ingestGroupSQL claims every key and inserts the events whose claim won, in one statement: one round trip
// and one commit for the whole group. Keys are claimed in (workspace, key) order so that two groups racing
// on the same keys (two replicas) wait on each other in the same order instead of deadlocking; a key that
// appears twice in one group is claimed by its first row only.
const ingestGroupSQL = `WITH input AS (
		SELECT * FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::text[], $5::text[], $6::text[], $7::timestamptz[],
			$8::timestamptz[], $9::text[], $10::text[], $11::text[], $12::text[], $13::text[], $14::text[], $15::text[], $16::text[],
			$17::text[], $18::text[], $19::text[], $20::text[], $21::text[], $22::text[], $23::text[], $24::text[], $25::text[],
			$26::text[], $27::text[], $28::int[], $29::timestamptz[], $30::boolean[])
		AS x(id, workspace_id, source_id, idempotency_key, event_type, channel, occurred_at, received_at, email, email_raw,
			email_problem, phone, phone_raw, phone_problem, first_name, last_name, company, target_stage, current_stage, fields,
			attribution, hydration, rule_overrides, payload, content_type, status, reason, attempts, processed_at, spooled)
	), claim AS (
		INSERT INTO idempotency_keys (workspace_id, key, event_id, source_id)
		SELECT workspace_id, idempotency_key, id::uuid, source_id FROM input ORDER BY workspace_id, idempotency_key, id
		ON CONFLICT DO NOTHING RETURNING event_id
	), ins AS (
		INSERT INTO events (id, workspace_id, source_id, idempotency_key, event_type, channel, occurred_at, received_at,
			email, email_raw, email_problem, phone, phone_raw, phone_problem, first_name, last_name, company,
			target_stage, current_stage, fields, attribution, hydration, rule_overrides, payload, content_type,
			status, reason, attempts, processed_at, spooled)
		SELECT c.event_id, i.workspace_id, i.source_id, i.idempotency_key, i.event_type, i.channel, i.occurred_at, i.received_at,
			i.email, i.email_raw, i.email_problem, i.phone, i.phone_raw, i.phone_problem, i.first_name, i.last_name, i.company,
			i.target_stage, i.current_stage, i.fields::jsonb, i.attribution::jsonb,
			i.hydration::jsonb, i.rule_overrides::jsonb, i.payload::jsonb, i.content_type, i.status, i.reason, i.attempts,
			i.processed_at, i.spooled
		FROM input i JOIN claim c ON c.event_id = i.id::uuid
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

// ErrGroupUnencodable means Postgres could not read an item's text as its column's type (a payload that is
// not a JSON document), so the group stored nothing: the caller stores the items one by one instead.
var ErrGroupUnencodable = errors.New("an item cannot be encoded for a group insert")

// IngestStoreGroup stores single-event deliveries of many concurrent requests together (application-level
// group commit). Every item must carry a provider key (not Windowed). The result for items[i] is out[i]:
// a new event, or a duplicate naming the stored event. The events are committed by one statement, so a
// failure stores none of them; the duplicate count is a second statement, run only when there are any.
func (s *Store) IngestStoreGroup(ctx context.Context, items []IngestItem) ([]IngestResult, error) {
	cols := newGroupColumns(len(items))
	for i := range items {
		it := &items[i]
		if it.Windowed {
			return nil, fmt.Errorf("models: store event group: item %d has a windowed key", i)
		}
		ev := &it.Event
		ev.IdempotencyKey = it.Key
		receivedAt(ev)
		cols.add(ev, it.Key)
	}
	inserted, err := s.groupInserted(ctx, cols)
	if refusedText(err) {
		return nil, fmt.Errorf("models: store event group: %w: %v", ErrGroupUnencodable, err)
	}
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
func (s *Store) groupInserted(ctx context.Context, cols *groupColumns) ([]string, error) {
	var inserted []string
	err := s.scanRows(ctx, func(rows *sql.Rows) error {
		var id string
		if err := rows.Scan(&id); err != nil {
			return err
		}
		inserted = append(inserted, id)
		return nil
	}, ingestGroupSQL, cols.args()...)
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

// refusedText reports Postgres refusing a parameter's text as its type (invalid_text_representation: a
// JSON column that is not a JSON document, an id that is not a UUID), which fails the whole group statement.
func refusedText(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "22P02"
}
