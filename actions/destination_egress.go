package actions

import "github.com/leadgate/leadgate/internal/egress"

// EgressRefusal is why a URL an editor saves (a destination's or hydration provider's base_url, the
// side-effect webhook) would be refused by the SSRF guard g (nil: public addresses only) when dialed: a
// literal private, loopback, link-local or metadata address, or localhost, that
// LEADGATE_EGRESS_ALLOWED_HOSTS does not allow. "" when it is fine here; a host name is checked again on
// every connection, after DNS.
func EgressRefusal(g *egress.Guard, raw string) string {
	if raw == "" {
		return ""
	}
	if g == nil {
		g = egress.Outbound(nil)
	}
	if _, err := g.CheckURL(raw); err != nil {
		return err.Error()
	}
	return ""
}
