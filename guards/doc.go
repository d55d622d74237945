// Package guards groups what keeps a real deployment safe: the loop breaker (guards/loop), silence and
// health alarms (guards/alarm) and alert channels with their delivery (guards/alert). Set builds them, and
// the source filters ingest runs (ingest/filter), once per process.
package guards
