package crm

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"
	_ "time/tzdata" // the account's time zone must load in a container without a zoneinfo database
)

// HubSpot's daily API limit resets at midnight in the account's time zone (usage guidelines), and a 429 of
// that limit names its policy DAILY. Retrying it every 10 s only spends attempts until then, so it is a
// Quota fault that lasts until the reset. The time zone is read from GET /account-info/v3/details
// (PortalInformationResponse.timeZone, PublicApiSpecs/Account/Account Info/Rollouts/144923/v3/accountInfo.json)
// before it is needed: once the quota is used up that read may be refused too.
const (
	hsZoneRetry        = time.Hour // a failed account-details read is tried again after this
	hsUnknownResetWait = time.Hour // the wait when the time zone could not be read: check again then
)

// do sends one HubSpot request; a daily-quota refusal gets its RetryAfter to the account's daily reset.
func (h *hubSpot) do(ctx context.Context, c call, calls *int) (int, error) {
	status, err := h.api.do(ctx, c, calls)
	var e *Error
	if errors.As(err, &e) && e.Class == Quota && e.RetryAfter == 0 {
		e.RetryAfter, e.Message = h.untilDailyReset(ctx, e.Message)
	}
	return status, err
}

// untilDailyReset is how long until the account's daily quota resets, with the message saying when.
func (h *hubSpot) untilDailyReset(ctx context.Context, msg string) (time.Duration, string) {
	loc := h.accountZone(ctx)
	if loc == nil {
		return hsUnknownResetWait, msg + "; the account's time zone could not be read, so leadgate tries again in 1h"
	}
	now := h.cfg.Now()
	local := now.In(loc)
	reset := time.Date(local.Year(), local.Month(), local.Day()+1, 0, 0, 0, 0, loc)
	return reset.Sub(now), fmt.Sprintf("%s; it resets at midnight %s (%s)", msg, loc, reset.UTC().Format(time.RFC3339))
}

// accountZone returns the account's time zone, read once per adapter (a failure is retried after an hour;
// nil until known).
func (h *hubSpot) accountZone(ctx context.Context) *time.Location {
	now := h.cfg.Now()
	h.mu.Lock()
	loc, tried := h.zone, h.zoneTried
	if loc == nil && (tried.IsZero() || now.Sub(tried) >= hsZoneRetry) {
		h.zoneTried = now
		tried = time.Time{}
	}
	h.mu.Unlock()
	if loc != nil || !tried.IsZero() {
		return loc
	}
	var out struct {
		TimeZone              string `json:"timeZone"`
		UTCOffsetMilliseconds *int64 `json:"utcOffsetMilliseconds"`
	}
	if _, err := h.api.do(ctx, call{method: http.MethodGet, path: "/account-info/v3/details", out: &out}, nil); err != nil {
		return nil
	}
	loc, err := time.LoadLocation(out.TimeZone)
	if err != nil || out.TimeZone == "" {
		if out.UTCOffsetMilliseconds == nil {
			return nil
		}
		loc = time.FixedZone(out.TimeZone, int(*out.UTCOffsetMilliseconds/1000))
	}
	h.mu.Lock()
	h.zone = loc
	h.mu.Unlock()
	return loc
}
