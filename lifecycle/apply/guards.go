package apply

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/leadgate/leadgate/guards/loop"
	"github.com/leadgate/leadgate/lifecycle"
	"github.com/leadgate/leadgate/models"
)

// Guards are the loop guards the apply step consults (issue 5 §1-2).
type Guards struct {
	Writes  *loop.Writes  // what the CRM sync last wrote, for echo detection
	Breaker *loop.Breaker // per-contact circuit breaker
}

// loopSettings loads the workspace's loop settings once per run.
func (r *applyRun) loopSettings(ctx context.Context, workspaceID int64) models.LoopSettings {
	if r.loop == nil {
		g, err := r.tx.GuardSettingsGet(ctx, workspaceID)
		ls := g.Loop.WithDefaults()
		if err != nil {
			ls = models.LoopSettings{}.WithDefaults()
		}
		r.loop = &ls
	}
	return *r.loop
}

// echo reports whether a CRM-originated event is the echo of leadgate's own
// write, with the reason to record when it is.
func (r *applyRun) echo(ctx context.Context, ev models.Event, src models.Source) (bool, string) {
	if r.a.Guards.Writes == nil || !loop.IsCRMSource(src.Kind) {
		return false, ""
	}
	identity := deref(ev.Email)
	if identity == "" {
		identity = deref(ev.Phone)
	}
	var recent map[string]string
	if identity != "" {
		var err error
		if recent, err = r.a.Guards.Writes.Recall(ctx, ev.WorkspaceID, identity); err != nil {
			r.a.Log.Warn("apply: echo memory unavailable; judging by the loop flag alone", "event", ev.ID, "err", err)
		}
	}
	raw := map[string]any{}
	_ = json.Unmarshal(ev.Fields, &raw)
	v := loop.IsEcho(loop.Change{SourceKind: src.Kind, Fields: raw, Values: proposedValues(ev)}, r.loopSettings(ctx, ev.WorkspaceID), recent, r.a.now())
	return v.Echo, v.EventReason()
}

// proposedValues is what a CRM event proposes, in the names the sync engine
// remembers (syncer.EchoValues): "stage" plus the contact's fields.
func proposedValues(ev models.Event) map[string]string {
	v := eventFields(ev)
	for k := range v {
		if crmMetaField(k) {
			delete(v, k)
		}
	}
	if s := deref(ev.TargetStage); s != "" {
		v["stage"] = s
	} else if s := deref(ev.CurrentStage); s != "" {
		v["stage"] = s
	}
	return v
}

// humanCorrection turns a genuine CRM change (a rep moved the stage or fixed a
// field in the CRM) into a decision with a human's authority, so leadgate and
// the CRM agree: the stage is set as proposed, even backwards. The stage
// value resolves exactly as for a new contact (the source's aliases, then the
// workspace's), and a value that names no stage is quarantined as
// unknown_stage just as Decide does: never silently dropped.
func humanCorrection(rules lifecycle.Rules, p lifecycle.Proposal, ev models.Event, lc lifecycle.Contact) lifecycle.Decision {
	stage := proposedValues(ev)["stage"]
	if stage == "" {
		return lifecycle.Decision{Outcome: lifecycle.Unchanged, ApplyFields: true, Stage: lifecycle.None,
			Reason: "change made in the CRM (not an echo): fields applied as a human correction"}
	}
	canon, ok := rules.ResolveStage(stage, p)
	if !ok && p.TargetStage == "" {
		// Only a reported current stage (not a proposal), which Decide ignores too.
		return lifecycle.Decision{Outcome: lifecycle.Unchanged, ApplyFields: true, Stage: lifecycle.None,
			Reason: "change made in the CRM (not an echo): fields applied as a human correction"}
	}
	if !ok {
		return lifecycle.Decision{Outcome: lifecycle.Quarantined, Stage: lifecycle.Invalid, DeadLetterKind: lifecycle.KindUnknownStage,
			Reason: fmt.Sprintf("stage %q set in the CRM is neither a stage nor an alias (add it to the source's stage aliases)", stage)}
	}
	if canon == lc.Stage {
		return lifecycle.Decision{Outcome: lifecycle.Unchanged, ApplyFields: true, Stage: lifecycle.Same,
			Reason: "change made in the CRM (not an echo): fields applied as a human correction"}
	}
	return lifecycle.Decision{Outcome: lifecycle.Applied, ApplyFields: true, Stage: lifecycle.Forward, NewStage: canon, EnteredAt: ev.OccurredAt,
		Reason: fmt.Sprintf("stage set to %s in the CRM (not an echo): applied as a human correction", canon)}
}

// filterTags are the tags the source's filters attached at ingest.
func filterTags(ev models.Event) []string {
	raw := eventFields(ev)["filter_tags"]
	if raw == "" {
		return nil
	}
	var tags []string
	if err := json.Unmarshal([]byte(raw), &tags); err != nil {
		return strings.Split(raw, ",")
	}
	return tags
}

// breakerHolds counts an event that is about to change an existing contact
// and, when the contact's circuit breaker is open, holds the event as a
// loop_suspected dead letter instead.
func (r *applyRun) breakerHolds(ctx context.Context, ev models.Event, c *models.Contact, d lifecycle.Decision) (bool, error) {
	if r.a.Guards.Breaker == nil || c == nil || r.override != "" {
		return false, nil
	}
	if d.Outcome != lifecycle.Applied && !(d.Outcome == lifecycle.Unchanged && d.ApplyFields) {
		return false, nil
	}
	dec, err := r.a.Guards.Breaker.Allow(ctx, ev.WorkspaceID, c.ID, r.loopSettings(ctx, ev.WorkspaceID))
	if err != nil {
		r.a.Log.Warn("apply: circuit breaker unavailable; event applied", "event", ev.ID, "err", err)
		return false, nil
	}
	if dec.Allowed {
		return false, nil
	}
	return true, r.quarantine(ctx, ev, c, loop.KindLoopSuspected, dec.Reason)
}

// crmMetaField names fields that describe a CRM webhook rather than the
// contact (loop-breaker flag, who triggered it, filter tags): they are never
// stored as contact fields nor compared for echoes.
func crmMetaField(k string) bool {
	switch k {
	case "last_automation_source", "sync_timestamp", "changeSource", "sourceId", "initiated_by", "initiated_from", "filter_tags", "phone_verified":
		return true
	}
	return false
}
