package models

import (
	"context"
	"fmt"
)

// ContactExport is everything leadgate holds about one contact.
type ContactExport struct {
	Contact      Contact       `json:"contact"`
	Events       []Event       `json:"events"`
	Observations []Observation `json:"observations"`
	StageHistory []StageChange `json:"stage_history"`
	Outbox       []OutboxRow   `json:"outbox"`
	DeadLetters  []DeadLetter  `json:"dead_letters"`
	Audit        []AuditEntry  `json:"audit"`
}

// ContactExportAll gathers a contact's data for a subject-access request.
func (s *Store) ContactExportAll(ctx context.Context, c Contact) (ContactExport, error) {
	x := ContactExport{Contact: c}
	db := s.db.WithContext(ctx)
	steps := []struct {
		dst   any
		query string
		args  []any
	}{
		{&x.Events, "SELECT * FROM events WHERE contact_id = ? OR (workspace_id = ? AND ((email IS NOT NULL AND email = ?) OR (phone IS NOT NULL AND phone = ?))) ORDER BY occurred_at, id",
			[]any{c.ID, c.WorkspaceID, c.Email, c.Phone}},
		{&x.Observations, "SELECT * FROM observations WHERE contact_id = ? ORDER BY id", []any{c.ID}},
		{&x.StageHistory, "SELECT * FROM stage_history WHERE contact_id = ? ORDER BY id", []any{c.ID}},
		{&x.Outbox, "SELECT * FROM outbox WHERE contact_id = ? ORDER BY id", []any{c.ID}},
		{&x.DeadLetters, "SELECT * FROM dead_letters WHERE contact_id = ? OR event_id IN (SELECT id FROM events WHERE contact_id = ?) ORDER BY id", []any{c.ID, c.ID}},
		{&x.Audit, "SELECT * FROM audit_log WHERE subject_type = 'contact' AND subject_id = ? ORDER BY id", []any{c.ID}},
	}
	for _, st := range steps {
		if err := db.Raw(st.query, st.args...).Scan(st.dst).Error; err != nil {
			return x, fmt.Errorf("models: export contact %s: %w", c.ID, err)
		}
	}
	return x, nil
}

// ContactErase strips every personal field of a contact from leadgate's
// tables, keeping the rows (outcomes, counts, stage history) anonymized. Call
// it inside a transaction; extra statements run after the built-in ones so
// that packages owning their own tables (CRM sync state, the sandbox) erase too.
func (s *Store) ContactErase(ctx context.Context, c Contact, extra ...func(ctx context.Context, st *Store, c Contact) error) error {
	db := s.db.WithContext(ctx)
	eventScope := "(contact_id = @id OR (workspace_id = @ws AND ((email IS NOT NULL AND email = @email) OR (phone IS NOT NULL AND phone = @phone))))"
	named := map[string]any{"id": c.ID, "ws": c.WorkspaceID, "email": c.Email, "phone": c.Phone}
	stmts := []string{
		`UPDATE dead_letters SET payload = NULL, reason = '[erased]' WHERE contact_id = @id OR event_id IN (SELECT id FROM events WHERE ` + eventScope + `)`,
		`UPDATE events SET email = NULL, email_raw = NULL, email_problem = NULL, phone = NULL, phone_raw = NULL, phone_problem = NULL,
			first_name = NULL, last_name = NULL, company = NULL, fields = '{}', attribution = '{}', payload = NULL, hydration = NULL,
			rule_overrides = NULL, reason = CASE WHEN reason = '' THEN '' ELSE '[erased]' END WHERE ` + eventScope,
		`DELETE FROM observations WHERE contact_id = @id`,
		`UPDATE outbox SET payload = '{"erased":true}'::jsonb WHERE contact_id = @id`,
		`UPDATE audit_log SET before = CASE WHEN before IS NULL THEN NULL ELSE '{"erased":true}'::jsonb END, after = CASE WHEN after IS NULL THEN NULL ELSE '{"erased":true}'::jsonb END
			WHERE subject_type = 'contact' AND subject_id = CAST(@id AS text)`,
		`UPDATE stage_history SET reason = '[erased]' WHERE contact_id = @id AND reason <> ''`,
		`UPDATE contacts SET email = NULL, phone = NULL, first_name = NULL, last_name = NULL, company = NULL, fields = '{}',
			first_touch = '{}', tags = '[]', score_breakdown = '[]', erased_at = now(), updated_at = now()
			WHERE id IN (WITH RECURSIVE tree(id) AS (SELECT CAST(@id AS uuid) UNION SELECT c.id FROM contacts c JOIN tree t ON c.merged_into = t.id)
				SELECT id FROM tree)`, // the contact and every contact merged into it, however deep
	}
	for _, q := range stmts {
		if err := db.Exec(q, named).Error; err != nil {
			return fmt.Errorf("models: erase contact %s: %w", c.ID, err)
		}
	}
	for _, fn := range extra {
		if err := fn(ctx, s, c); err != nil {
			return err
		}
	}
	return nil
}
