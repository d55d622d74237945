package ui

import (
	"strings"

	"github.com/leadgate/leadgate/lifecycle"
)

// decisionWhy says in plain language what a stage decision does to its event
// and which rule decided it, e.g. "Purchase would jump Engaged → Closed,
// skipping SQL; skipping is off, so it goes to dead letters". It is built
// from the decision's structured parts, never from its Reason, so every
// verdict reads the same way.
func decisionWhy(d lifecycle.Decision) string {
	j := d.Judged
	who := eventLabel(j.EventType)
	var what string
	switch d.Stage {
	case lifecycle.Invalid:
		what = who + " names the stage " + quote(j.Proposed) + ", which is neither a stage nor an alias in these rules"
	case lifecycle.None:
		if d.Outcome == lifecycle.Wait {
			what = who + " needs an existing contact and none matches yet"
		} else {
			what = who + " proposes no stage"
		}
	case lifecycle.Same:
		what = who + " would keep the contact in " + j.To + ", where it already is"
	default:
		what = who + " " + movePhrase(d.Stage, j)
		if rule := rulePhrase(d.Stage, j); rule != "" && j.Rule != "loop_breaker" {
			what += "; " + rule
		}
	}
	if j.Rule == "loop_breaker" {
		return what + ", but the contact's loop breaker is tripped, so the loop breaker stops it and it goes to dead letters until an operator resets the breaker"
	}
	return what + ", " + consequence(d)
}

// movePhrase is the stage change itself.
func movePhrase(v lifecycle.StageVerdict, j lifecycle.Judged) string {
	skipping := ""
	if len(j.Skipped) > 0 {
		skipping = ", skipping " + andList(j.Skipped)
	}
	switch {
	case j.From == "":
		return "would start a new contact in " + j.To + skipping
	case v == lifecycle.Late || v == lifecycle.Regression || v == lifecycle.AllowedBackward:
		return "would move " + j.From + " back to " + j.To
	case skipping != "":
		return "would jump " + j.From + " → " + j.To + skipping
	}
	return "would move " + j.From + " → " + j.To
}

// rulePhrase is the rule setting that decided, as the operator would say it.
func rulePhrase(v lifecycle.StageVerdict, j lifecycle.Judged) string {
	switch j.Rule {
	case "allow_skip":
		if v == lifecycle.SkipDisallowed {
			return "skipping is off"
		}
		return "skipping is allowed"
	case "allow_regression":
		if v == lifecycle.Regression && j.Policy == "" {
			return "moving back is allowed"
		}
		return "moving back is off"
	case "allowed_backward":
		if v == lifecycle.AllowedBackward {
			return j.From + " → " + j.To + " is an allowed backward move"
		}
		return j.From + " is a final stage, left only by an allowed backward move"
	case "on_late_event":
		return "it happened before the contact entered " + j.From + " (a late event)"
	case "require_phone_verification":
		return j.To + " needs a verified phone and this contact has none"
	case "required_fields":
		return j.To + " needs fields this contact lacks"
	}
	return ""
}

// consequence is what happens to the event.
func consequence(d lifecycle.Decision) string {
	switch d.Outcome {
	case lifecycle.Applied:
		if len(d.Tags) > 0 {
			return "so it is applied and the contact is tagged " + andList(d.Tags)
		}
		return "so it is applied"
	case lifecycle.Unchanged:
		if d.ApplyFields {
			return "so only its fields are applied"
		}
		return "so nothing changes"
	case lifecycle.Quarantined:
		return "so it goes to dead letters"
	case lifecycle.Dropped:
		return "so it is dropped"
	case lifecycle.Wait:
		return "so it waits for one (a dead letter if none appears)"
	}
	return "so its outcome is " + string(d.Outcome)
}

// eventLabel turns an event type into a sentence subject: "purchase" ->
// "Purchase", "form_submitted" -> "Form submitted".
func eventLabel(eventType string) string {
	s := strings.TrimSpace(strings.ReplaceAll(eventType, "_", " "))
	if s == "" {
		return "The event"
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func andList(items []string) string {
	switch len(items) {
	case 0:
		return ""
	case 1:
		return items[0]
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}

func quote(s string) string { return "“" + s + "”" }
