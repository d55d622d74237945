package models

import (
	"context"
	"fmt"
	"time"
)

// Hydration providers.
const (
	ProviderMeta    = "meta"
	ProviderHubSpot = "hubspot"
)

// ProviderCredential is a workspace's token for a lead provider's API (hydration of id-only webhooks).
type ProviderCredential struct {
	ID           int64
	WorkspaceID  int64
	Provider     string
	TokenEnc     []byte
	BaseURL      string
	RateLimitRPS int `gorm:"column:rate_limit_rps"`
	UpdatedAt    time.Time
}

// TableName maps ProviderCredential to hydration_providers.
func (ProviderCredential) TableName() string { return "hydration_providers" }

// ProviderCredentialGet returns a workspace's credential for provider (ErrNotFound when none).
func (s *Store) ProviderCredentialGet(ctx context.Context, workspaceID int64, provider string) (ProviderCredential, error) {
	var c ProviderCredential
	err := s.db.WithContext(ctx).Where("workspace_id = ? AND provider = ?", workspaceID, provider).Take(&c).Error
	return c, syncNotFound(err, "provider credential")
}

// ProviderCredentialPut creates or replaces a workspace's credential for a provider.
func (s *Store) ProviderCredentialPut(ctx context.Context, c ProviderCredential) error {
	err := s.db.WithContext(ctx).Exec(`INSERT INTO hydration_providers (workspace_id, provider, token_enc, base_url, rate_limit_rps, updated_at)
		VALUES (?, ?, ?, ?, ?, now())
		ON CONFLICT (workspace_id, provider) DO UPDATE SET token_enc = EXCLUDED.token_enc, base_url = EXCLUDED.base_url,
		  rate_limit_rps = EXCLUDED.rate_limit_rps, updated_at = now()`,
		c.WorkspaceID, c.Provider, c.TokenEnc, c.BaseURL, c.RateLimitRPS).Error
	if err != nil {
		return fmt.Errorf("models: put provider credential: %w", err)
	}
	return nil
}

// ProviderCredentialList lists a workspace's configured providers (tokens stay sealed).
func (s *Store) ProviderCredentialList(ctx context.Context, workspaceID int64) ([]ProviderCredential, error) {
	var out []ProviderCredential
	if err := s.db.WithContext(ctx).Where("workspace_id = ?", workspaceID).Order("provider").Find(&out).Error; err != nil {
		return nil, fmt.Errorf("models: list provider credentials: %w", err)
	}
	return out, nil
}
