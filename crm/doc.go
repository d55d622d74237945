// Package crm writes leadgate's desired contact state to a CRM: ActiveCampaign v3, HubSpot CRM v3 and
// GoHighLevel (LeadConnector) v2, each through its documented REST API.
//
// A Destination upserts micro-batches of Contact values and returns one Result per contact. Every write is
// planned against what the CRM currently holds and what leadgate last wrote (Contact.Previous):
//
//   - an empty desired value never erases a remote one;
//   - first-touch attribution is written only where the remote value is still empty;
//   - a field whose remote value differs from what leadgate last wrote was edited by a human or another
//     integration: it is left alone and reported as a FieldConflict;
//   - every contact mutation carries the loop-breaker flag (LoopField = "leadgate", and SyncField = the
//     time of the write) so CRM workflows can ignore leadgate's own writes.
//
// None of the three CRMs offers conditional writes (no If-Match, ETag or version), so a human edit that
// lands between our read and our write is overwritten: the race window is one read-to-write round trip
// per contact (per batch for HubSpot). Result.Written records what leadgate believes it wrote; the caller
// stores it and passes it back as Contact.Previous on the next sync.
//
// Failures are classified per issue 4 §7 into an *Error with a Class: RateLimited (429, AC's 400
// "Rate limit exceeded"), Transient (5xx, 423, timeouts, network), Auth (401/402/403), Invalid (400/422
// validation, a missing mapped field) and NotFound (a remote id that no longer exists).
//
// NewReader reads a CRM's existing contacts for the initial import and the drift check, through the
// adapter's client, so a read fails with the same *Error a write would.
//
// Rate limiting across replicas lives in crm/ratelimit; fake CRM servers for tests live in crm/crmfake.
package crm
