// Package lifecycle is leadgate's pure stage and field engine: a workspace's
// stage rules (Rules), the decision an event's proposal produces against a
// contact's current state (Decide), field precedence (ResolveFields,
// FirstTouch), the idempotent lead score (ScoreRules.Compute), side effects
// with stable ids (SideEffectsFor) and the dry-run replay (DryRun).
//
// Nothing here touches a database, the network or the clock: every function
// is deterministic given its arguments, and time enters only through the
// timestamps carried by contacts, proposals and observations. The apply job
// loads the contact under its advisory locks, calls Decide, writes what the
// Decision says and records Decision.Reason.
package lifecycle
