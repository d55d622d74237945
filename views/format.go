package views

import (
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// statusText is the small label above an error page's title.
func statusText(status int) string {
	return "Error " + strconv.Itoa(status) + " · " + http.StatusText(status)
}

// count formats n with thin thousands separators (12 345).
func count(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := n < 0
	if neg {
		s = s[1:]
	}
	out := make([]byte, 0, len(s)+len(s)/3)
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	if neg {
		return "-" + string(out)
	}
	return string(out)
}

// stamp is an absolute UTC time for tables and tooltips.
func stamp(t time.Time) string {
	return t.UTC().Format("2006-01-02 15:04:05") + " UTC"
}

// isoStamp is the machine-readable datetime attribute of <time>.
func isoStamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// ago is a short relative time ("3 min ago") measured from now.
func ago(t, now time.Time) string {
	d := now.Sub(t)
	switch {
	case d < 5*time.Second:
		return "just now"
	case d < time.Minute:
		return fmt.Sprintf("%d s ago", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%d min ago", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%d h ago", int(d.Hours()))
	default:
		return fmt.Sprintf("%d days ago", int(d.Hours()/24))
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func round1(v float64) float64 { return float64(int64(v*10+0.5)) / 10 }

// orDash shows "–" for an empty value.
func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

func containsString(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
