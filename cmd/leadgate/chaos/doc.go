// Package chaos proves leadgate's promise end to end: it replays a
// multi-channel lead traffic scenario against the real leadgate binary (on
// real Postgres and Redis, writing to a fake ActiveCampaign process) and
// against a naive direct-to-CRM baseline, injects faults while the traffic
// runs (SIGKILL of leadgate, a Redis restart that loses its data, a Postgres
// restart, a CRM 503 storm), and reports both side by side: duplicate
// contacts, stage regressions, lost leads, CRM failures and rate-limit
// behaviour, ack latency and throughput.
//
// `leadgate chaos` is the command-line front; `leadgate chaos fakecrm` runs the
// fake CRM as its own process with a control API (see FakeCRM).
package chaos
