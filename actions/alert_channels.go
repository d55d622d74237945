package actions

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/leadgate/leadgate/guards/alert"
	"github.com/leadgate/leadgate/models"
)

// ChannelInput configures an alert channel. Secrets are sealed on save and never answered.
type ChannelInput struct {
	Name        string        `json:"name"`
	Kind        string        `json:"kind"`
	MinSeverity string        `json:"min_severity"`
	Enabled     *bool         `json:"enabled"`
	Config      alert.Config  `json:"config"`
	Secrets     alert.Secrets `json:"secrets"`
}

// ChannelView is an alert channel as the API answers it and the audit records it: which secrets are
// set, never their values.
type ChannelView struct {
	ID            int64        `json:"id"`
	Name          string       `json:"name"`
	Kind          string       `json:"kind"`
	MinSeverity   string       `json:"min_severity"`
	Enabled       bool         `json:"enabled"`
	Config        alert.Config `json:"config"`
	SecretsSet    []string     `json:"secrets_set"`
	LastTestAt    *time.Time   `json:"last_test_at"`
	LastTestError string       `json:"last_test_error"`
	CreatedAt     time.Time    `json:"created_at"`
	UpdatedAt     time.Time    `json:"updated_at"`
}

// ChannelView is c's view.
func (g *Guards) ChannelView(c models.AlertChannel) ChannelView {
	ch, _ := alert.Open(c, g.Box)
	return ChannelView{ID: c.ID, Name: c.Name, Kind: c.Kind, MinSeverity: c.MinSeverity, Enabled: c.Enabled, Config: ch.Config,
		SecretsSet: ch.Secrets.Names(), LastTestAt: c.LastTestAt, LastTestError: c.LastTestError, CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt}
}

// checkChannel refuses a channel without a proper name or that the workspace's SSRF guard does not let through.
func (g *Guards) checkChannel(ctx context.Context, wsID int64, ch alert.Channel) error {
	if n := strings.TrimSpace(ch.Name); n == "" || len(n) > 200 {
		return Invalid("name", "name must be 1-200 characters")
	}
	guard, err := g.Guards.For(ctx, wsID)
	if err != nil {
		return fmt.Errorf("load the alert guard of workspace %d: %w", wsID, err)
	}
	if err := ch.Validate(guard); err != nil {
		var fe *alert.FieldError
		if errors.As(err, &fe) {
			return Invalid(fe.Field, fe.Message)
		}
		return Invalid("", err.Error())
	}
	return nil
}

// AlertChannel loads channel id of the workspace.
func (g *Guards) AlertChannel(ctx context.Context, wsID, id int64) (models.AlertChannel, error) {
	c, err := g.Store.AlertChannelGet(ctx, wsID, id)
	if errors.Is(err, models.ErrNotFound) {
		return c, NotFound("id", "unknown alert channel")
	}
	if err != nil {
		return c, fmt.Errorf("load alert channel %d: %w", id, err)
	}
	return c, nil
}

// CreateAlertChannel adds a channel, its secrets sealed, and answers it as stored.
func (g *Guards) CreateAlertChannel(ctx context.Context, ws models.Workspace, actor string, in ChannelInput) (ChannelView, error) {
	ch := alert.Channel{Kind: in.Kind, Name: strings.TrimSpace(in.Name), MinSeverity: in.MinSeverity, Config: in.Config, Secrets: in.Secrets}
	if err := g.checkChannel(ctx, ws.ID, ch); err != nil {
		return ChannelView{}, err
	}
	c := models.AlertChannel{WorkspaceID: ws.ID, Enabled: in.Enabled == nil || *in.Enabled}
	if err := alert.Seal(ch, g.Box, &c); err != nil {
		return ChannelView{}, fmt.Errorf("seal alert channel %q: %w", ch.Name, err)
	}
	err := g.Store.Tx(ctx, func(tx *models.Store) error {
		if err := tx.AlertChannelCreate(ctx, &c); err != nil {
			return err
		}
		return tx.AuditRecord(ctx, models.Audit{WorkspaceID: ws.ID, Actor: actor, Action: "alert_channel.create",
			SubjectType: "alert_channel", SubjectID: strconv.FormatInt(c.ID, 10), After: g.ChannelView(c)})
	})
	if err != nil {
		return ChannelView{}, fmt.Errorf("create alert channel %q: %w", ch.Name, err)
	}
	return g.storedChannel(ctx, ws.ID, c.ID)
}

// UpdateAlertChannel replaces the settings of c, a channel its caller loaded from the workspace (the API
// answers a missing one before reading the input); secrets left empty keep their current values. The
// kind cannot change.
func (g *Guards) UpdateAlertChannel(ctx context.Context, actor string, c models.AlertChannel, in ChannelInput) (ChannelView, error) {
	if in.Kind != "" && in.Kind != c.Kind {
		return ChannelView{}, Invalid("kind", "a channel's kind cannot change; create a new channel")
	}
	cur, err := alert.Open(c, g.Box)
	if err != nil {
		return ChannelView{}, fmt.Errorf("open alert channel %d: %w", c.ID, err)
	}
	ch := alert.Channel{ID: c.ID, Kind: c.Kind, Name: strings.TrimSpace(in.Name), MinSeverity: in.MinSeverity, Config: in.Config,
		Secrets: cur.Secrets.Merge(in.Secrets)}
	if err := g.checkChannel(ctx, c.WorkspaceID, ch); err != nil {
		return ChannelView{}, err
	}
	before := g.ChannelView(c)
	if in.Enabled != nil {
		c.Enabled = *in.Enabled
	}
	if err := alert.Seal(ch, g.Box, &c); err != nil {
		return ChannelView{}, fmt.Errorf("seal alert channel %d: %w", c.ID, err)
	}
	err = g.Store.Tx(ctx, func(tx *models.Store) error {
		if err := tx.AlertChannelUpdate(ctx, c); err != nil {
			return err
		}
		return tx.AuditRecord(ctx, models.Audit{WorkspaceID: c.WorkspaceID, Actor: actor, Action: "alert_channel.update",
			SubjectType: "alert_channel", SubjectID: strconv.FormatInt(c.ID, 10), Before: before, After: g.ChannelView(c)})
	})
	if err != nil {
		return ChannelView{}, fmt.Errorf("update alert channel %d: %w", c.ID, err)
	}
	return g.storedChannel(ctx, c.WorkspaceID, c.ID)
}

// DeleteAlertChannel removes channel id.
func (g *Guards) DeleteAlertChannel(ctx context.Context, ws models.Workspace, actor string, id int64) error {
	c, err := g.AlertChannel(ctx, ws.ID, id)
	if err != nil {
		return err
	}
	err = g.Store.Tx(ctx, func(tx *models.Store) error {
		if err := tx.AlertChannelDelete(ctx, c.WorkspaceID, c.ID); err != nil {
			return err
		}
		return tx.AuditRecord(ctx, models.Audit{WorkspaceID: c.WorkspaceID, Actor: actor, Action: "alert_channel.delete",
			SubjectType: "alert_channel", SubjectID: strconv.FormatInt(c.ID, 10), Before: g.ChannelView(c)})
	})
	if err != nil {
		return fmt.Errorf("delete alert channel %d: %w", id, err)
	}
	return nil
}

// TestAlertChannel sends a test alert through channel id now (not through the outbox) and records how it
// went on the channel; a refused or failed send is an *UpstreamError with the channel's error.
func (g *Guards) TestAlertChannel(ctx context.Context, ws models.Workspace, id int64) error {
	c, err := g.AlertChannel(ctx, ws.ID, id)
	if err != nil {
		return err
	}
	ch, err := alert.Open(c, g.Box)
	if err != nil {
		return fmt.Errorf("open alert channel %d: %w", id, err)
	}
	guard, err := g.Guards.For(ctx, c.WorkspaceID)
	if err != nil {
		return fmt.Errorf("load the alert guard of workspace %d: %w", c.WorkspaceID, err)
	}
	sender := *g.Sender
	sender.Guard = guard
	sendCtx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	sendErr := sender.Send(sendCtx, ch, alert.TestMessage(ws.Slug, g.now()))
	errText := ""
	if sendErr != nil {
		errText = sendErr.Error()
	}
	if err := g.Store.AlertChannelTested(ctx, c.ID, errText); err != nil {
		return fmt.Errorf("record the test of alert channel %d: %w", id, err)
	}
	if sendErr != nil {
		return &UpstreamError{Message: errText}
	}
	return nil
}

// storedChannel reads a channel just saved, as the store now has it.
func (g *Guards) storedChannel(ctx context.Context, wsID, id int64) (ChannelView, error) {
	c, err := g.Store.AlertChannelGet(ctx, wsID, id)
	if err != nil {
		return ChannelView{}, fmt.Errorf("read alert channel %d just saved: %w", id, err)
	}
	return g.ChannelView(c), nil
}
