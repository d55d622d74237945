package alert

import (
	"net/netip"

	"github.com/leadgate/leadgate/internal/egress"
)

// Guard keeps alert channels (and the heartbeat ping) off leadgate's own network: the shared egress
// guard, https-only in its zero value (AllowHTTP unset); the hosts a workspace's admin allows are added
// per workspace (WorkspaceGuards).
type Guard = egress.Guard

// BlockedError says an outbound target was refused by the SSRF guard.
type BlockedError = egress.BlockedError

// Resolver looks up a host's addresses; *net.Resolver satisfies it.
type Resolver = egress.Resolver

// PublicAddr reports whether ip may be reached without an allowlist entry.
func PublicAddr(ip netip.Addr) bool { return egress.PublicAddr(ip) }
