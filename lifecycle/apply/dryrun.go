package apply

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/leadgate/leadgate/lifecycle"
	"github.com/leadgate/leadgate/models"
)

// DryRunResult compares what proposed rules would do with what is.
type DryRunResult struct {
	Since        time.Time                `json:"since"`
	Events       int                      `json:"events"`
	Totals       lifecycle.DryRunTotals   `json:"totals"`
	StageChanges []DryRunStageChange      `json:"stage_changes"`
	Quarantined  []lifecycle.EventVerdict `json:"quarantined"`
	Dropped      []lifecycle.EventVerdict `json:"dropped"`
	FinalStages  map[string]string        `json:"final_stages"`
	Report       lifecycle.DryRunReport   `json:"-"`
}

// DryRunStageChange is a contact whose stage would differ from today's.
type DryRunStageChange struct {
	ContactKey string `json:"contact_key"`
	ContactID  string `json:"contact_id,omitempty"`
	Current    string `json:"current_stage"`
	WouldBe    string `json:"would_be"`
}

// DryRun replays the workspace's events since `since` through rules from an
// empty state (as a fresh workspace would) and compares the final stages with
// the contacts' current ones. It writes nothing.
func DryRun(ctx context.Context, st *models.Store, workspaceID int64, rules lifecycle.Rules, since time.Time) (DryRunResult, error) {
	res := DryRunResult{Since: since, FinalStages: map[string]string{}}
	sources, err := st.SourceList(ctx, workspaceID)
	if err != nil {
		return res, err
	}
	srcByID := map[int64]models.Source{}
	for _, s := range sources {
		srcByID[s.ID] = s
	}
	events, err := st.EventsSince(ctx, workspaceID, since)
	if err != nil {
		return res, fmt.Errorf("apply: dry-run events: %w", err)
	}
	hist := make([]lifecycle.HistoricalEvent, 0, len(events))
	contactOf := map[string]string{}
	for _, ev := range events {
		if ev.Status == models.EventRejected {
			continue
		}
		key := identityKey(ev)
		if key == "" {
			continue
		}
		if ev.ContactID != nil {
			contactOf[key] = *ev.ContactID
		}
		hist = append(hist, lifecycle.HistoricalEvent{ContactKey: key, EventID: ev.ID, Proposal: proposal(ev, srcByID[ev.SourceID])})
	}
	if err := holdTripped(ctx, st, workspaceID, hist, contactOf); err != nil {
		return res, err
	}
	rep := lifecycle.DryRun(rules, hist)
	res.Report, res.Events, res.Totals = rep, len(hist), rep.Totals
	res.FinalStages = rep.FinalStages()
	for _, c := range rep.Contacts {
		res.Quarantined = append(res.Quarantined, c.Quarantined...)
		res.Dropped = append(res.Dropped, c.Dropped...)
		cid := contactOf[c.Key]
		current := ""
		if cid != "" {
			if cur, err := st.ContactGet(ctx, workspaceID, cid); err == nil {
				current = cur.Stage
			}
		}
		if current != c.FinalStage {
			res.StageChanges = append(res.StageChanges, DryRunStageChange{ContactKey: c.Key, ContactID: cid, Current: current, WouldBe: c.FinalStage})
		}
	}
	sort.Slice(res.StageChanges, func(i, j int) bool { return res.StageChanges[i].ContactKey < res.StageChanges[j].ContactKey })
	return res, nil
}

// holdTripped marks the events of contacts whose loop breaker is tripped:
// the apply job would hold every change to them as loop_suspected dead
// letters until an operator resets the breaker, so the preview does too.
// The breaker's Postgres record is read, never its Redis counter, so a
// preview counts nothing.
func holdTripped(ctx context.Context, st *models.Store, workspaceID int64, hist []lifecycle.HistoricalEvent, contactOf map[string]string) error {
	holds := map[string]*lifecycle.Hold{}
	for key, cid := range contactOf {
		b, err := st.BreakerGet(ctx, workspaceID, cid)
		if errors.Is(err, models.ErrNotFound) {
			continue
		}
		if err != nil {
			return fmt.Errorf("apply: dry-run loop breaker of %s: %w", cid, err)
		}
		if b.Status == models.BreakerTripped {
			holds[key] = &lifecycle.Hold{Rule: "loop_breaker", Kind: models.KindLoopSuspected, Reason: b.Reason}
		}
	}
	for i := range hist {
		hist[i].Hold = holds[hist[i].ContactKey]
	}
	return nil
}

// identityKey groups events by the person they identify (email, else phone).
func identityKey(ev models.Event) string {
	switch {
	case ev.Email != nil:
		return "email:" + *ev.Email
	case ev.Phone != nil:
		return "phone:" + *ev.Phone
	}
	return ""
}
