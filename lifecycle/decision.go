package lifecycle

import "time"

// Contact is the state Decide needs about the contact an event resolved to.
type Contact struct {
	// Exists is false when identity resolution found no contact yet.
	Exists bool
	// Stage is the current stage ("" = none yet).
	Stage string
	// StageEnteredAt is the event time (OccurredAt of the event, or the time
	// of the manual change) at which the contact entered Stage — never the
	// time the apply job ran, or every delayed delivery would look late.
	StageEnteredAt time.Time
	// PhoneVerified is true once a verifying source confirmed the phone.
	PhoneVerified bool
	// Fields are the contact's current values, including identity fields
	// (email, phone) under those names when rules may require them.
	Fields map[string]string
}

// Proposal is what one event proposes for its contact.
type Proposal struct {
	EventType string
	// TargetStage is an explicit stage (or alias) from the payload; it wins
	// over any event-type mapping.
	TargetStage string
	// SourceEventStages is the event type -> stage mapping of the event's
	// source; it wins over Rules.EventStages.
	SourceEventStages map[string]string
	// SourceAliases maps the source's own stage values (case-insensitive)
	// to stages; it wins over Rules.Aliases. Nil: SourceVocabulary's default
	// aliases apply (see Rules.ResolveStage).
	SourceAliases map[string]string
	// SourceVocabulary is the source provider's standard stage values (HubSpot's
	// lifecyclestage), whose default aliases spread them over the stages.
	SourceVocabulary []VocabularyTerm
	OccurredAt       time.Time
	Fields           map[string]string
	// PhoneVerified is true when the event comes from a phone-verifying
	// source (a connected voice call) or carries phone_verified.
	PhoneVerified bool
}

// Outcome is what happens to the event's stage proposal. Its values are the
// CONTRACT.md event outcomes, except Wait, which the caller reports as
// "unresolved" while it retries.
type Outcome string

// Outcomes of a Decision.
const (
	// Applied: the stage changes to Decision.NewStage.
	Applied Outcome = "applied"
	// Unchanged: the stage stays; fields are applied when ApplyFields is set.
	Unchanged Outcome = "unchanged"
	// Quarantined: nothing is applied; the event becomes a dead letter of
	// Decision.DeadLetterKind.
	Quarantined Outcome = "quarantined"
	// Dropped: nothing is applied and no dead letter is written.
	Dropped Outcome = "dropped"
	// Wait: the event needs an existing contact that is not there yet; retry
	// later and dead-letter it (kind "missing_contact") when retries run out.
	Wait Outcome = "wait"
)

// StageVerdict classifies the proposed stage against the current one.
type StageVerdict string

// Stage verdicts of a Decision.
const (
	// None: the event proposes no stage.
	None StageVerdict = "none"
	// Forward: a higher stage, or entering a terminal stage.
	Forward StageVerdict = "forward"
	// SkipDisallowed: a forward move over intermediate stages while
	// AllowSkip is false; handled by OnStateConflict.
	SkipDisallowed StageVerdict = "skip_disallowed"
	// Same: the contact is already in the proposed stage.
	Same StageVerdict = "same"
	// Late: a lower stage (or leaving a terminal stage) proposed by an event
	// that happened no later than the entry into the current stage;
	// handled by OnLateEvent.
	Late StageVerdict = "late"
	// Regression: a lower stage (or leaving a terminal stage) proposed by a
	// newer event; applied only with AllowRegression (never out of a
	// terminal stage), else handled by OnStateConflict.
	Regression StageVerdict = "regression"
	// AllowedBackward: a regression listed in Rules.AllowedBackward; applied.
	AllowedBackward StageVerdict = "allowed_backward"
	// Invalid: the proposed stage is unknown to the rules.
	Invalid StageVerdict = "invalid"
)

// Dead-letter kinds set in Decision.DeadLetterKind.
const (
	KindStateConflict   = "state_conflict"
	KindSkipNotAllowed  = "skip_not_allowed"
	KindLateEvent       = "late_event"
	KindMissingField    = "missing_field"
	KindUnknownStage    = "unknown_stage"
	KindPhoneUnverified = "phone_unverified"
	// KindMissingContact is set on Wait decisions: the kind to use when the
	// caller gives up waiting.
	KindMissingContact = "missing_contact"
)

// Decision is the verdict on one event for one contact.
//
// How the caller combines stage and fields: Outcome describes the stage. When
// Outcome is Applied or Unchanged and ApplyFields is true, the caller applies
// the event's fields (by precedence) and, for an Unchanged decision, reports
// the event as "applied" if that changed the contact (a new contact, a field
// value, a tag) and "unchanged" otherwise — EventOutcome does exactly that.
// Quarantined, Dropped and Wait decisions apply nothing (ApplyFields false).
type Decision struct {
	Outcome Outcome
	// NewStage is the stage after the event; "" means the stage is unchanged.
	NewStage string
	// EnteredAt is the new StageEnteredAt (the event's OccurredAt) when
	// NewStage is set, zero otherwise.
	EnteredAt time.Time
	// Stage is the verdict on the proposed stage.
	Stage StageVerdict
	// ApplyFields says whether the event's fields are applied.
	ApplyFields bool
	// Tags are added to the contact, e.g. "needs-data".
	Tags []string
	// DeadLetterKind is set for Quarantined (the dead letter's kind) and Wait
	// (the kind once retries run out) decisions.
	DeadLetterKind string
	// Reason is a human-readable explanation for the timeline and dead letters.
	Reason string
	// Judged is what was decided about, in structured form, so a reader can
	// explain the decision in its own words without parsing Reason.
	Judged Judged
}

// Judged describes the stage change a Decision judged.
type Judged struct {
	EventType string
	// From is the contact's canonical stage before the event ("" = none).
	From string
	// To is the canonical proposed stage ("" = the event proposes none).
	To string
	// Proposed is the stage value as the event or mapping wrote it; for an
	// Invalid verdict it is the value no stage or alias matched.
	Proposed string
	// Skipped are the ordered stages strictly between From and To on a
	// forward move over intermediate stages.
	Skipped []string
	// Rule is the rule setting that decided: "allow_skip",
	// "allow_regression", "allowed_backward", "on_late_event",
	// "require_phone_verification", "required_fields", "requires_contact",
	// "stages" (an unknown stage); "" for a move simply in order.
	Rule string
	// Policy is the conflict policy value applied (on_state_conflict,
	// on_late_event, on_missing_field), "" when none was.
	Policy string
}

// EventOutcome is the event's final outcome once the caller knows whether
// applying the fields (and creating the contact, and adding Tags) changed
// anything: an Unchanged decision whose fields changed the contact is Applied.
func (d Decision) EventOutcome(fieldsChanged bool) Outcome {
	if d.Outcome == Unchanged && d.ApplyFields && fieldsChanged {
		return Applied
	}
	return d.Outcome
}
