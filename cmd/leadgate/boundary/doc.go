// Package boundary holds the failure-boundary tests of issue 7 §5: each runs the real `leadgate serve`
// binary on a fresh Postgres database and Redis DB, drives synthetic records through its HTTP API and
// webhooks, kills the process at one named point of its work (LEADGATE_FAILPOINTS, see
// internal/failpoint), starts it again without the failpoint, waits until everything has settled, and
// checks the final field values (in leadgate and in the fake CRM), the recorded outcome (event, outbox,
// sync state, dead letters) and the number of downstream actions (CRM creates and writes, side-effect
// deliveries per Idempotency-Key, provider fetches). docs/operations.md "Failure boundaries" lists them.
package boundary
