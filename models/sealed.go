package models

import (
	"context"
	"fmt"
)

// SealedColumn names a column holding secretbox ciphertext, so that key
// rotation can find every secret at rest.
type SealedColumn struct {
	Table   string
	IDCol   string
	Columns []string
}

// sealedColumns lists every encrypted column. A migration that adds one must add it here.
func sealedColumns() []SealedColumn {
	return []SealedColumn{
		{Table: "sources", IDCol: "id", Columns: []string{"secret_enc", "previous_secret_enc"}},
		{Table: "destinations", IDCol: "id", Columns: []string{"api_token_enc"}},
		{Table: "hydration_providers", IDCol: "id", Columns: []string{"token_enc"}},
		{Table: "alert_channels", IDCol: "id", Columns: []string{"secret_enc"}},
		{Table: "side_effect_webhooks", IDCol: "id", Columns: []string{"secret_enc"}},
	}
}

// Resealer re-encrypts one ciphertext (open with the old key, seal with the new).
type Resealer func(sealed []byte) ([]byte, error)

// SecretsReseal re-encrypts every secret at rest in one transaction; a
// failure leaves everything under the old key. It returns how many it changed.
func (s *Store) SecretsReseal(ctx context.Context, reseal Resealer) (int, error) {
	n := 0
	err := s.Tx(ctx, func(tx *Store) error {
		db := tx.db.WithContext(ctx)
		for _, sc := range sealedColumns() {
			var exists bool
			if err := db.Raw(`SELECT to_regclass(?) IS NOT NULL`, sc.Table).Scan(&exists).Error; err != nil {
				return err
			}
			if !exists {
				continue
			}
			for _, col := range sc.Columns {
				var colExists bool
				db.Raw(`SELECT EXISTS (SELECT 1 FROM information_schema.columns WHERE table_name = ? AND column_name = ?)`, sc.Table, col).Scan(&colExists)
				if !colExists {
					continue
				}
				rows := []struct {
					ID     int64
					Sealed []byte
				}{}
				q := fmt.Sprintf(`SELECT %s AS id, %s AS sealed FROM %s WHERE %s IS NOT NULL`, sc.IDCol, col, sc.Table, col)
				if err := db.Raw(q).Scan(&rows).Error; err != nil {
					return fmt.Errorf("models: read %s.%s: %w", sc.Table, col, err)
				}
				for _, r := range rows {
					out, err := reseal(r.Sealed)
					if err != nil {
						return fmt.Errorf("models: %s.%s id %d: %w", sc.Table, col, r.ID, err)
					}
					if err := db.Exec(fmt.Sprintf(`UPDATE %s SET %s = ? WHERE %s = ?`, sc.Table, col, sc.IDCol), out, r.ID).Error; err != nil {
						return fmt.Errorf("models: write %s.%s: %w", sc.Table, col, err)
					}
					n++
				}
			}
		}
		return tx.AuditRecord(ctx, Audit{Actor: "cli", Action: "secrets.rotate", SubjectType: "secret_key", After: map[string]int{"resealed": n}})
	})
	return n, err
}
