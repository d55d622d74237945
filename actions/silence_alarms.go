package actions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/leadgate/leadgate/guards/alarm"
	"github.com/leadgate/leadgate/models"
)

// SilenceInput configures a silence alarm; it is also what the audit records as the change.
type SilenceInput struct {
	SourceID         *int64              `json:"source_id"`
	Metric           string              `json:"metric"`
	Rule             string              `json:"rule"` // learned (default) | static
	ThresholdSeconds int                 `json:"threshold_seconds"`
	ReminderSeconds  int                 `json:"reminder_seconds"`
	BusinessHours    alarm.BusinessHours `json:"business_hours"`
	MinDailyVolume   int                 `json:"min_daily_volume"`
	Enabled          *bool               `json:"enabled"`
}

// validate fills defaults and refuses the first problem.
func (in *SilenceInput) validate() error {
	if in.Metric == "" {
		in.Metric = models.SilenceApply
	}
	if in.Metric != models.SilenceApply && in.Metric != models.SilenceCRMWrite {
		return Invalid("metric", "metric must be apply or crm_write")
	}
	if in.Metric == models.SilenceCRMWrite && in.SourceID != nil {
		return Invalid("source_id", "a crm_write alarm watches the whole workspace: CRM writes are not per source")
	}
	switch {
	case in.Rule == "" && in.Metric == models.SilenceApply:
		in.Rule = models.SilenceRuleLearned
	case in.Rule == "":
		in.Rule = models.SilenceRuleStatic
	case in.Rule != models.SilenceRuleLearned && in.Rule != models.SilenceRuleStatic:
		return Invalid("rule", "rule must be learned or static")
	case in.Rule == models.SilenceRuleLearned && in.Metric != models.SilenceApply:
		return Invalid("rule", "the learned rule watches leads applied (metric apply); CRM writes use the static rule")
	}
	if in.ThresholdSeconds == 0 {
		in.ThresholdSeconds = int(alarm.DefaultSilenceThreshold.Seconds())
	}
	if in.ReminderSeconds == 0 {
		in.ReminderSeconds = int(alarm.DefaultSilenceReminder.Seconds())
	}
	if in.ThresholdSeconds < 60 || in.ThresholdSeconds > 30*86400 {
		return Invalid("threshold_seconds", "threshold_seconds must be from 60 to 2592000")
	}
	if in.ReminderSeconds < 60 || in.ReminderSeconds > 30*86400 {
		return Invalid("reminder_seconds", "reminder_seconds must be from 60 to 2592000")
	}
	if in.MinDailyVolume < 0 || in.MinDailyVolume > 1_000_000 {
		return Invalid("min_daily_volume", "min_daily_volume must be from 0 to 1000000")
	}
	if _, err := in.BusinessHours.Compile(); err != nil {
		return Invalid("business_hours", err.Error())
	}
	return nil
}

func (in SilenceInput) model(workspaceID int64) models.SilenceAlarm {
	bh, _ := json.Marshal(in.BusinessHours)
	enabled := in.Enabled == nil || *in.Enabled
	return models.SilenceAlarm{WorkspaceID: workspaceID, SourceID: in.SourceID, Metric: in.Metric, Rule: in.Rule, ThresholdSeconds: in.ThresholdSeconds,
		ReminderSeconds: in.ReminderSeconds, BusinessHours: bh, MinDailyVolume: in.MinDailyVolume, Enabled: enabled}
}

// checkSilence validates in (filling its defaults) and checks that its source is a live one of the workspace.
func (g *Guards) checkSilence(ctx context.Context, wsID int64, in *SilenceInput) error {
	if err := in.validate(); err != nil {
		return err
	}
	if in.SourceID != nil {
		src, err := g.Store.SourceGet(ctx, wsID, *in.SourceID)
		if errors.Is(err, models.ErrNotFound) || (err == nil && src.DeletedAt != nil) {
			return Invalid("source_id", "unknown source")
		}
		if err != nil {
			return fmt.Errorf("load source %d of a silence alarm: %w", *in.SourceID, err)
		}
	}
	return nil
}

// silenceTaken refuses a second alarm for one scope and metric.
func silenceTaken() error {
	return &ConflictError{Field: "metric", Message: "this scope already has a silence alarm for this metric"}
}

// CreateSilenceAlarm adds a silence alarm (one per scope and metric) and answers it with its state.
func (g *Guards) CreateSilenceAlarm(ctx context.Context, ws models.Workspace, actor string, in SilenceInput) (models.SilenceAlarm, error) {
	if err := g.checkSilence(ctx, ws.ID, &in); err != nil {
		return models.SilenceAlarm{}, err
	}
	a := in.model(ws.ID)
	err := g.Store.Tx(ctx, func(tx *models.Store) error {
		if err := tx.SilenceAlarmCreate(ctx, &a); err != nil {
			return err
		}
		return tx.AuditRecord(ctx, models.Audit{WorkspaceID: ws.ID, Actor: actor, Action: "silence_alarm.create",
			SubjectType: "silence_alarm", SubjectID: strconv.FormatInt(a.ID, 10), After: in})
	})
	if errors.Is(err, models.ErrConflict) {
		return models.SilenceAlarm{}, silenceTaken()
	}
	if err != nil {
		return models.SilenceAlarm{}, fmt.Errorf("create silence alarm: %w", err)
	}
	return g.silenceInForce(ctx, ws.ID, a.ID)
}

// UpdateSilenceAlarm replaces alarm id's configuration (a new episode starts) and answers it with its state.
func (g *Guards) UpdateSilenceAlarm(ctx context.Context, ws models.Workspace, actor string, id int64, in SilenceInput) (models.SilenceAlarm, error) {
	if err := g.checkSilence(ctx, ws.ID, &in); err != nil {
		return models.SilenceAlarm{}, err
	}
	a := in.model(ws.ID)
	a.ID = id
	err := g.Store.Tx(ctx, func(tx *models.Store) error {
		before, err := tx.SilenceAlarmGet(ctx, ws.ID, id)
		if err != nil {
			return err
		}
		if err := tx.SilenceAlarmUpdate(ctx, a); err != nil {
			return err
		}
		return tx.AuditRecord(ctx, models.Audit{WorkspaceID: ws.ID, Actor: actor, Action: "silence_alarm.update",
			SubjectType: "silence_alarm", SubjectID: strconv.FormatInt(id, 10), Before: before, After: in})
	})
	switch {
	case errors.Is(err, models.ErrNotFound):
		return models.SilenceAlarm{}, NotFound("id", "unknown silence alarm")
	case errors.Is(err, models.ErrConflict):
		return models.SilenceAlarm{}, silenceTaken()
	case err != nil:
		return models.SilenceAlarm{}, fmt.Errorf("update silence alarm %d: %w", id, err)
	}
	return g.silenceInForce(ctx, ws.ID, id)
}

// DeleteSilenceAlarm removes alarm id.
func (g *Guards) DeleteSilenceAlarm(ctx context.Context, ws models.Workspace, actor string, id int64) error {
	err := g.Store.Tx(ctx, func(tx *models.Store) error {
		before, err := tx.SilenceAlarmGet(ctx, ws.ID, id)
		if err != nil {
			return err
		}
		if err := tx.SilenceAlarmDelete(ctx, ws.ID, id); err != nil {
			return err
		}
		return tx.AuditRecord(ctx, models.Audit{WorkspaceID: ws.ID, Actor: actor, Action: "silence_alarm.delete",
			SubjectType: "silence_alarm", SubjectID: strconv.FormatInt(id, 10), Before: before})
	})
	if errors.Is(err, models.ErrNotFound) {
		return NotFound("id", "unknown silence alarm")
	}
	if err != nil {
		return fmt.Errorf("delete silence alarm %d: %w", id, err)
	}
	return nil
}

// silenceInForce reads an alarm just saved, its state evaluated again under the new configuration, so
// the answer and the page show the state in force. A failed evaluation is left to the next check.
func (g *Guards) silenceInForce(ctx context.Context, wsID, id int64) (models.SilenceAlarm, error) {
	a, err := g.Store.SilenceAlarmGet(ctx, wsID, id)
	if err != nil {
		return a, fmt.Errorf("read silence alarm %d just saved: %w", id, err)
	}
	if g.Alarms != nil {
		if err := g.Alarms.CheckSilenceAlarm(ctx, a); err != nil {
			g.Log.Warn("guards: silence alarm saved; its state is refreshed by the next check", "alarm", id, "err", err)
		} else if a, err = g.Store.SilenceAlarmGet(ctx, wsID, id); err != nil {
			return a, fmt.Errorf("read silence alarm %d just checked: %w", id, err)
		}
	}
	return a, nil
}
