package crmfake

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// HubSpot account tiers with their published API limits (developers.hubspot.com usage guidelines, as checked
// in the project's CRM API reference): requests per 10 s per app, and per day per account.
const (
	HSTierFree       = "free"       // and Starter: 100 per 10 s, 250,000 a day
	HSTierPro        = "pro"        // Professional: 190 per 10 s, 650,000 a day
	HSTierEnterprise = "enterprise" // 190 per 10 s, 1,000,000 a day
)

// HSTierLimits returns a tier's burst (per 10 s) and daily limits; 0, 0 for an unknown tier.
func HSTierLimits(tier string) (perTenSeconds, daily int) {
	switch tier {
	case HSTierFree:
		return 100, 250_000
	case HSTierPro:
		return 190, 650_000
	case HSTierEnterprise:
		return 190, 1_000_000
	}
	return 0, 0
}

// hsQuota is the account's request accounting: the rolling 10 s burst window (policy TEN_SECONDLY_ROLLING),
// the search endpoint's own per-second limit, and the daily quota (policy DAILY) that resets at midnight in
// the account's time zone. Endpoints whose description lists x-hubspot-rate-limit-exemptions
// ["ten-secondly"] (search, v4 association batch endpoints) are not counted in the burst window.
type hsQuota struct {
	burst    int
	window   time.Duration
	daily    int
	search   int // per second; <= 0 none
	admitted []time.Time
	searches []time.Time
	day      string // the account-local date the daily count belongs to
	used     int
}

func newHSQuota(o HSOptions) hsQuota {
	q := hsQuota{window: o.RateWindow, search: o.SearchPerSecond}
	q.burst, q.daily = HSTierLimits(o.Tier)
	if o.RateLimit > 0 {
		q.burst = o.RateLimit
	}
	if o.DailyLimit > 0 {
		q.daily = o.DailyLimit
	}
	if q.window <= 0 {
		q.window = 10 * time.Second
	}
	return q
}

// tenSecondlyExempt reports whether the endpoint is exempt from the burst window (its description's
// x-hubspot-rate-limit-exemptions).
func tenSecondlyExempt(r *http.Request) bool {
	p := r.URL.Path
	return r.Method == http.MethodPost && (strings.HasSuffix(p, "/search") || strings.HasPrefix(p, "/crm/v4/associations/"))
}

// admit counts a request against the limits (arrived is wall time for the windows, now the account clock
// for the day) and returns the X-HubSpot-RateLimit-* headers and, when it is refused, the 429 writer.
func (q *hsQuota) admit(r *http.Request, arrived, now time.Time, loc *time.Location, retryAfter int) (http.Header, func(http.ResponseWriter)) {
	h := http.Header{}
	if q.daily > 0 {
		if day := now.In(loc).Format(time.DateOnly); day != q.day {
			q.day, q.used = day, 0
		}
		h.Set("X-HubSpot-RateLimit-Daily", strconv.Itoa(q.daily))
		if q.used >= q.daily {
			h.Set("X-HubSpot-RateLimit-Daily-Remaining", "0")
			return h, hsDailyLimited
		}
	}
	switch {
	case strings.HasSuffix(r.URL.Path, "/search") && q.search > 0:
		q.searches = trimWindow(q.searches, arrived, time.Second)
		if len(q.searches) >= q.search {
			return h, withRetryAfter(retryAfter, hsSecondlyLimited)
		}
		q.searches = append(q.searches, arrived)
	case !tenSecondlyExempt(r) && q.burst > 0:
		q.admitted = trimWindow(q.admitted, arrived, q.window)
		h.Set("X-HubSpot-RateLimit-Max", strconv.Itoa(q.burst))
		h.Set("X-HubSpot-RateLimit-Interval-Milliseconds", strconv.FormatInt(q.window.Milliseconds(), 10))
		if len(q.admitted) >= q.burst {
			h.Set("X-HubSpot-RateLimit-Remaining", "0")
			return h, withRetryAfter(retryAfter, hsTenSecondlyLimited)
		}
		q.admitted = append(q.admitted, arrived)
		h.Set("X-HubSpot-RateLimit-Remaining", strconv.Itoa(q.burst-len(q.admitted)))
	}
	if q.daily > 0 {
		q.used++
		h.Set("X-HubSpot-RateLimit-Daily-Remaining", strconv.Itoa(q.daily-q.used))
	}
	return h, nil
}

func trimWindow(times []time.Time, now time.Time, d time.Duration) []time.Time {
	cut := now.Add(-d)
	i := 0
	for i < len(times) && !times[i].After(cut) {
		i++
	}
	return times[i:]
}

// withRetryAfter adds Retry-After when the test asked for one (Options.RetryAfter): HubSpot's published
// description does not say its 429s carry it, so by default they do not.
func withRetryAfter(secs int, write func(http.ResponseWriter)) func(http.ResponseWriter) {
	if secs <= 0 {
		return write
	}
	return func(w http.ResponseWriter) {
		w.Header().Set("Retry-After", strconv.Itoa(secs))
		write(w)
	}
}

// The 429 bodies name the policy that was hit (policyName), per HubSpot's usage guidelines.
func hsRateLimited(w http.ResponseWriter, msg, policy string) {
	writeJSON(w, http.StatusTooManyRequests, map[string]any{"status": "error", "message": msg, "errorType": "RATE_LIMIT",
		"correlationId": "aeb5f871-7f07-4993-9211-075dc63e7cbf", "policyName": policy})
}

func hsTenSecondlyLimited(w http.ResponseWriter) {
	hsRateLimited(w, "You have reached your ten secondly limit.", "TEN_SECONDLY_ROLLING")
}

func hsSecondlyLimited(w http.ResponseWriter) {
	hsRateLimited(w, "You have reached your secondly limit.", "SECONDLY")
}

func hsDailyLimited(w http.ResponseWriter) {
	hsRateLimited(w, "You have reached your daily limit.", "DAILY")
}

// GET /account-info/v3/details: PortalInformationResponse (PublicApiSpecs/Account/Account Info/Rollouts/
// 144923/v3/accountInfo.json), every field of which is required; timeZone is the account's time zone.
func (f *HubSpot) accountDetails(w http.ResponseWriter, r *http.Request) {
	now := f.hsOpts.Now().In(f.loc)
	_, off := now.Zone()
	sign, abs := "+", off
	if off < 0 {
		sign, abs = "-", -off
	}
	writeJSON(w, http.StatusOK, map[string]any{"portalId": 62515, "accountType": "STANDARD", "timeZone": f.hsOpts.TimeZone,
		"companyCurrency": "USD", "additionalCurrencies": []string{}, "utcOffset": sign + time.Unix(int64(abs), 0).UTC().Format("15:04"),
		"utcOffsetMilliseconds": off * 1000, "uiDomain": "app.hubspot.com", "dataHostingLocation": "na1"})
}

// DailyUsed is how many requests the daily quota counted today.
func (f *HubSpot) DailyUsed() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.quota.used
}
