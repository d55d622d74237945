package signature

import (
	"strconv"
	"time"
)

// Timestamp units: senders disagree (Stripe/Calendly/Standard Webhooks send
// seconds; Webflow/HubSpot/Retell milliseconds).
type timeUnit int

const (
	unitSeconds timeUnit = iota
	unitMillis
	unitAuto // seconds, or milliseconds when the value has 13+ digits
)

// parseUnixTimestamp parses a decimal unix timestamp strictly (digits only,
// bounded length) in the given unit.
func parseUnixTimestamp(s string, unit timeUnit) (time.Time, error) {
	if s == "" || len(s) > 19 {
		return time.Time{}, reject("invalid timestamp")
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return time.Time{}, reject("invalid timestamp")
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return time.Time{}, reject("invalid timestamp")
	}
	if unit == unitMillis || (unit == unitAuto && len(s) >= 13) {
		return time.UnixMilli(n), nil
	}
	return time.Unix(n, 0), nil
}

// checkWindow rejects a timestamp further than tol from now in either
// direction.
func checkWindow(ts, now time.Time, tol time.Duration) error {
	d := now.Sub(ts)
	if d > tol || d < -tol {
		return reject("timestamp outside the %s tolerance", tol)
	}
	return nil
}

// checkTimestamp parses s and enforces the replay window.
func checkTimestamp(s string, unit timeUnit, now time.Time, tol time.Duration) error {
	ts, err := parseUnixTimestamp(s, unit)
	if err != nil {
		return err
	}
	return checkWindow(ts, now, tol)
}
