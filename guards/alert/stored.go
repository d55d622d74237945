package alert

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/leadgate/leadgate/internal/secretbox"
	"github.com/leadgate/leadgate/models"
)

// Open decodes a stored channel and opens its secrets.
func Open(c models.AlertChannel, box *secretbox.Box) (Channel, error) {
	ch := Channel{ID: c.ID, Kind: c.Kind, Name: c.Name, MinSeverity: c.MinSeverity}
	if len(c.Config) > 0 {
		if err := json.Unmarshal(c.Config, &ch.Config); err != nil {
			return ch, fmt.Errorf("alert: channel %d config: %w", c.ID, err)
		}
	}
	plain, err := box.Open(c.SecretEnc)
	if err != nil {
		return ch, fmt.Errorf("alert: channel %d secrets: %w", c.ID, err)
	}
	if plain != "" {
		if err := json.Unmarshal([]byte(plain), &ch.Secrets); err != nil {
			return ch, fmt.Errorf("alert: channel %d secrets: %w", c.ID, err)
		}
	}
	return ch, nil
}

// Seal encodes ch's configuration and seals its secrets into c.
func Seal(ch Channel, box *secretbox.Box, c *models.AlertChannel) error {
	cfg, err := json.Marshal(ch.Config)
	if err != nil {
		return fmt.Errorf("alert: encode config: %w", err)
	}
	c.Config, c.Kind, c.Name, c.MinSeverity = cfg, ch.Kind, ch.Name, ch.MinSeverity
	if c.MinSeverity == "" {
		c.MinSeverity = SeverityInfo
	}
	sec, err := json.Marshal(ch.Secrets)
	if err != nil {
		return fmt.Errorf("alert: encode secrets: %w", err)
	}
	if string(sec) == "{}" {
		c.SecretEnc = nil
		return nil
	}
	if c.SecretEnc, err = box.Seal(string(sec)); err != nil {
		return fmt.Errorf("alert: seal secrets: %w", err)
	}
	return nil
}

// WorkspaceGuards builds each workspace's SSRF guard: Base plus the hosts
// the workspace's admin allowed.
type WorkspaceGuards struct {
	Store *models.Store
	Base  Guard
}

// For returns the guard of one workspace.
func (w *WorkspaceGuards) For(ctx context.Context, workspaceID int64) (*Guard, error) {
	s, err := w.Store.GuardSettingsGet(ctx, workspaceID)
	if err != nil {
		return nil, err
	}
	g := w.Base
	g.AllowedHosts = append(append([]string(nil), w.Base.AllowedHosts...), s.Alerting.AllowedHosts...)
	return &g, nil
}
