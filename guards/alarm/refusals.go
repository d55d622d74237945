package alarm

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/leadgate/leadgate/guards/alert"
	"github.com/leadgate/leadgate/models"
)

// Signature-refusal alarm defaults: it fires when at least
// DefaultRefusalThreshold of a source's last DefaultRefusalWindow deliveries
// were refused for their signature (a sender whose secret changed gets every
// delivery refused), and clears once DefaultRefusalClearAfter deliveries in a
// row were accepted again.
const (
	DefaultRefusalWindow     = 20
	DefaultRefusalThreshold  = 5
	DefaultRefusalClearAfter = 5
)

// RefusalRule is one source's signature-refusal alarm thresholds.
type RefusalRule struct {
	Window     int // deliveries looked at (M)
	Threshold  int // refused among them that fire the alarm (N)
	ClearAfter int // accepted in a row that clear it
}

// DefaultRefusalRule is the rule every source starts with.
func DefaultRefusalRule() RefusalRule {
	return RefusalRule{Window: DefaultRefusalWindow, Threshold: DefaultRefusalThreshold, ClearAfter: DefaultRefusalClearAfter}
}

// RefusalVerdict is one evaluation of the rule.
type RefusalVerdict struct {
	Firing     bool
	Refused    int // signature refusals among the last Considered deliveries
	Considered int
}

// EvaluateRefusals judges a source's recent delivery outcomes (one letter per
// delivery, oldest first; models.Delivery*) given whether its alarm is firing.
func EvaluateRefusals(r RefusalRule, recent string, firing bool) RefusalVerdict {
	window := recent
	if len(window) > r.Window {
		window = window[len(window)-r.Window:]
	}
	v := RefusalVerdict{Refused: strings.Count(window, string(rune(models.DeliveryRefusedSignature))), Considered: len(window)}
	cleared := r.ClearAfter > 0 && len(recent) >= r.ClearAfter &&
		strings.Count(recent[len(recent)-r.ClearAfter:], string(rune(models.DeliveryAccepted))) == r.ClearAfter
	if firing {
		v.Firing = !cleared
		return v
	}
	v.Firing = v.Refused >= r.Threshold && !cleared
	return v
}

// RefusalMessage is the alarm's text.
func RefusalMessage(sourceName string, v RefusalVerdict, reason string) string {
	if reason == "" {
		reason = "signature mismatch"
	}
	return fmt.Sprintf("%d of the last %d deliveries to source %s were refused: %s", v.Refused, v.Considered, sourceName, reason)
}

// RefusalAlarms evaluates the signature-refusal alarm of every source whose
// deliveries were just counted, persists its state (source_alarms) and writes
// one alert when it fires and one when it clears.
type RefusalAlarms struct {
	Store *models.Store
	Log   *slog.Logger
	Now   func() time.Time
	// Rule overrides the default thresholds (zero: DefaultRefusalRule).
	Rule RefusalRule
}

// Evaluate judges the rows a flush returned.
func (a *RefusalAlarms) Evaluate(ctx context.Context, rows []models.SourceDeliveries) error {
	var errs []error
	for _, row := range rows {
		if err := a.evaluate(ctx, row); err != nil {
			errs = append(errs, fmt.Errorf("refusal alarm of source %d: %w", row.SourceID, err))
		}
	}
	return errors.Join(errs...)
}

func (a *RefusalAlarms) evaluate(ctx context.Context, row models.SourceDeliveries) error {
	rule := a.Rule
	if rule.Window <= 0 {
		rule = DefaultRefusalRule()
	}
	st, err := a.Store.SourceAlarmGet(ctx, row.SourceID, models.SourceAlarmSignatureRefused)
	if err != nil {
		return err
	}
	v := EvaluateRefusals(rule, row.Recent, st.Firing)
	if v.Firing == st.Firing && !v.Firing {
		return nil
	}
	src, err := a.Store.SourceGet(ctx, row.WorkspaceID, row.SourceID)
	if err != nil {
		return err
	}
	reason, _ := strings.CutPrefix(row.LastRefusedReason, models.RefusalSignaturePrefix)
	if !strings.HasPrefix(row.LastRefusedReason, models.RefusalSignaturePrefix) {
		reason = ""
	}
	now := a.now()
	return a.Store.Tx(ctx, func(tx *models.Store) error {
		if v.Firing {
			msg := RefusalMessage(src.Name, v, reason)
			started, err := tx.SourceAlarmFire(ctx, row.WorkspaceID, row.SourceID, models.SourceAlarmSignatureRefused, msg, now)
			if err != nil || !started {
				return err
			}
			_, err = alert.Enqueue(ctx, tx, row.WorkspaceID, nil, refusalStableID(row.SourceID, now), refusalAlert(src, msg, now, true))
			return err
		}
		msg := fmt.Sprintf("Deliveries to source %s are accepted again (%d in a row).", src.Name, rule.ClearAfter)
		ended, err := tx.SourceAlarmClear(ctx, row.SourceID, models.SourceAlarmSignatureRefused, msg)
		if err != nil || ended == nil {
			return err
		}
		// The window starts afresh: the refusals of the episode are behind it.
		if err := tx.SourceDeliveriesKeepRecent(ctx, row.SourceID, rule.ClearAfter); err != nil {
			return err
		}
		since := now
		if ended.FiringSince != nil {
			since = *ended.FiringSince
		}
		_, err = alert.Enqueue(ctx, tx, row.WorkspaceID, nil, refusalStableID(row.SourceID, since)+":recovered", refusalAlert(src, msg, since, false))
		return err
	})
}

func refusalStableID(sourceID int64, since time.Time) string {
	return fmt.Sprintf("alert:signature_refused:%d:%d", sourceID, since.Unix())
}

func refusalAlert(src models.Source, msg string, since time.Time, trigger bool) alert.Payload {
	p := alert.Payload{Type: "signature_refused", Severity: alert.SeverityWarning,
		DedupKey: fmt.Sprintf("signature_refused:%d:%d", src.ID, since.Unix()), Text: msg,
		Details: map[string]any{"source_id": src.ID, "source": src.Name, "since": since.UTC().Format(time.RFC3339)}}
	if trigger {
		p.Action, p.Title = alert.ActionTrigger, "Deliveries refused: "+src.Name
		return p
	}
	p.Action, p.Title = alert.ActionResolve, "Deliveries accepted again: "+src.Name
	return p
}

func (a *RefusalAlarms) now() time.Time {
	if a.Now != nil {
		return a.Now()
	}
	return time.Now()
}
