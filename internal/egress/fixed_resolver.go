package egress

import (
	"context"
	"net/netip"
)

// FixedResolver answers fixed addresses per host name: how tests make a public-looking name resolve to a
// private address (DNS rebinding) without a DNS server.
type FixedResolver map[string][]string

// LookupNetIP implements Resolver; an unknown name has no addresses.
func (f FixedResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	var out []netip.Addr
	for _, a := range f[host] {
		out = append(out, netip.MustParseAddr(a))
	}
	return out, nil
}
