package web

import (
	"net/http"
	"net/netip"
	"strings"
)

// transportHeaders sets what every answer carries, API and webhooks included: nosniff, so a JSON
// answer is never run as a script or a page, and with an https public URL, HSTS, so a browser never
// again speaks plain http to this host.
func transportHeaders(hsts bool) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			h := w.Header()
			h.Set("X-Content-Type-Options", "nosniff")
			if hsts {
				h.Set("Strict-Transport-Security", "max-age=31536000; includeSubDomains")
			}
			next.ServeHTTP(w, r)
		})
	}
}

// proxyPrefixes turns the trusted proxies (IPs or CIDRs, checked by config) into CIDRs.
func proxyPrefixes(list []string) []string {
	out := make([]string, 0, len(list))
	for _, e := range list {
		e = strings.TrimSpace(e)
		if a, err := netip.ParseAddr(e); err == nil {
			e = netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()).String()
		}
		out = append(out, e)
	}
	return out
}
