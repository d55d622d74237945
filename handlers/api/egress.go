package api

import "github.com/leadgate/leadgate/actions"

// egressRefusal is why the SSRF guard would refuse raw when dialed ("" when it is fine here); the
// destination actions check their base_url the same way.
func (h *Destinations) egressRefusal(raw string) string {
	return actions.EgressRefusal(h.Egress, raw)
}
