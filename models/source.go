package models

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// Source is one lead source (a form, an ad platform, a voice agent...) with its
// own ingest URL token and signing secret.
type Source struct {
	ID                  int64
	WorkspaceID         int64
	Name                string
	Kind                string
	Channel             string
	Token               string
	SecretEnc           []byte
	PreviousSecretEnc   []byte
	PreviousSecretUntil *time.Time
	Config              SourceConfig `gorm:"serializer:json;type:jsonb"`
	Enabled             bool
	DeletedAt           *time.Time
	CreatedAt           time.Time
	UpdatedAt           time.Time
}

// SourceConfig is everything about a source that is not a secret.
type SourceConfig struct {
	// Verification settings passed to the signature package.
	Header          string   `json:"header,omitempty"`
	Encoding        string   `json:"encoding,omitempty"`
	Prefix          string   `json:"prefix,omitempty"`
	Algorithm       string   `json:"algorithm,omitempty"`
	TimestampHeader string   `json:"timestamp_header,omitempty"`
	ToleranceSec    int      `json:"tolerance_seconds,omitempty"`
	Mode            string   `json:"mode,omitempty"`
	BodyField       string   `json:"body_field,omitempty"`
	VerifyToken     string   `json:"verify_token,omitempty"`
	PublicKeys      []string `json:"public_keys,omitempty"`

	// Mapping overrides: lead field -> JSON path.
	Mapping map[string]string `json:"mapping,omitempty"`
	// DefaultRegion is the ISO region used to read national phone numbers.
	DefaultRegion string `json:"default_region,omitempty"`
	// EventStages maps this source's event types to lifecycle stages.
	EventStages map[string]string `json:"event_stages,omitempty"`
	// StageAliases maps the source's own stage values (HubSpot's
	// lifecyclestage "salesqualifiedlead") to the workspace's stages. Nil: the
	// provider's default aliases (see apply.SourceStageAliases).
	StageAliases map[string]string `json:"stage_aliases,omitempty"`
	// DefaultEventType names events whose payload has no type.
	DefaultEventType string `json:"default_event_type,omitempty"`
	// DedupeFields are hashed into the idempotency key when the sender has no delivery id.
	DedupeFields []string `json:"dedupe_fields,omitempty"`
	// AllowRuleOverrides lets payloads carry (stricter) state_machine_rules.
	AllowRuleOverrides bool `json:"allow_rule_overrides,omitempty"`
	// VerifiesPhone marks a source whose leads have a verified phone (a connected call).
	VerifiesPhone bool `json:"verifies_phone,omitempty"`
}

// SourceGetByToken finds a source by its ingest token, including disabled and
// deleted ones (the caller answers 503 / 410 for those).
func (s *Store) SourceGetByToken(ctx context.Context, token string) (Source, error) {
	var src Source
	err := s.db.WithContext(ctx).Where("token = ?", token).Take(&src).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return src, ErrNotFound
	}
	if err != nil {
		return src, fmt.Errorf("models: source by token: %w", err)
	}
	return src, nil
}

// SourceGet returns a live or deleted source of a workspace.
func (s *Store) SourceGet(ctx context.Context, workspaceID, id int64) (Source, error) {
	var src Source
	err := s.db.WithContext(ctx).Where("workspace_id = ?", workspaceID).Take(&src, id).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return src, ErrNotFound
	}
	if err != nil {
		return src, fmt.Errorf("models: source %d: %w", id, err)
	}
	return src, nil
}

// SourceList returns a workspace's sources that are not deleted, by name.
func (s *Store) SourceList(ctx context.Context, workspaceID int64) ([]Source, error) {
	var out []Source
	err := s.db.WithContext(ctx).Where("workspace_id = ? AND deleted_at IS NULL", workspaceID).Order("name, id").Find(&out).Error
	if err != nil {
		return nil, fmt.Errorf("models: list sources: %w", err)
	}
	return out, nil
}

// SourceCreate inserts a source with a fresh unguessable token.
func (s *Store) SourceCreate(ctx context.Context, src *Source) error {
	tok, err := newIngestToken()
	if err != nil {
		return err
	}
	src.Token = tok
	src.Enabled = true
	err = s.db.WithContext(ctx).Select("WorkspaceID", "Name", "Kind", "Channel", "Token", "SecretEnc", "Config", "Enabled").Create(src).Error
	if err != nil {
		return fmt.Errorf("models: create source: %w", err)
	}
	return nil
}

// SourceUpdate saves a source's editable columns.
func (s *Store) SourceUpdate(ctx context.Context, src *Source) error {
	src.UpdatedAt = time.Now()
	err := s.db.WithContext(ctx).Model(src).
		Select("Name", "Channel", "Config", "Enabled", "SecretEnc", "PreviousSecretEnc", "PreviousSecretUntil", "DeletedAt", "UpdatedAt").
		Updates(src).Error
	if err != nil {
		return fmt.Errorf("models: update source: %w", err)
	}
	return nil
}

// ConfigJSON is a convenience for audit entries.
func (c SourceConfig) ConfigJSON() json.RawMessage {
	b, _ := json.Marshal(c)
	return b
}

func newIngestToken() (string, error) {
	raw := make([]byte, 24)
	if _, err := rand.Read(raw); err != nil {
		return "", fmt.Errorf("models: token entropy: %w", err)
	}
	return "src_" + base64.RawURLEncoding.EncodeToString(raw), nil
}
