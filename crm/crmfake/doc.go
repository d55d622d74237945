// Package crmfake provides fake CRM servers (ActiveCampaign v3, HubSpot CRM v3, GoHighLevel v2) that
// follow the documented endpoints, JSON shapes and error answers closely enough to exercise leadgate's
// adapters in contract tests, load tests and chaos runs.
//
// Every fake can enforce a per-account sliding-window rate limit (429 with Retry-After), inject a random
// share of 503s, add latency, fail authentication, queue canned answers, and records every request with
// its time so a test can compute the most requests seen in any window (MaxInWindow). Each fake keeps its
// records in memory and offers a hook to simulate a human editing a contact in the CRM's UI.
package crmfake
