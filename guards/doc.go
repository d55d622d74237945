// Package guards groups what keeps a real deployment safe: source filters
// (guards/filter), the loop breaker (guards/loop), silence and health alarms
// (guards/alarm) and alert channels with their delivery (guards/alert).
package guards
