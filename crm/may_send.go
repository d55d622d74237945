package crm

// MaySend is implemented by the adapters that write over HTTP: the remote field values a write of c may
// carry, known before anything is sent. The relay records them as in doubt first, so that a process
// killed after the CRM carried a write out, and before the answer was read, still takes what it finds
// there for its own write rather than for a person's edit.
type MaySend interface {
	MaySend(c Contact) (map[string]string, error)
}

// maySend is every value cfg.wants routes for c, keyed as in Contact.Previous.
func (cfg Config) maySend(c Contact, native map[string]string) (map[string]string, error) {
	wants, err := cfg.wants(c, native)
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(wants))
	for _, w := range wants {
		out[w.key] = w.value
	}
	return out, nil
}

// MaySend implements MaySend.
func (a *activeCampaign) MaySend(c Contact) (map[string]string, error) {
	return a.cfg.maySend(c, acNative)
}

// MaySend implements MaySend.
func (h *hubSpot) MaySend(c Contact) (map[string]string, error) { return h.cfg.maySend(c, hsNative) }

// MaySend implements MaySend.
func (g *goHighLevel) MaySend(c Contact) (map[string]string, error) {
	return g.cfg.maySend(c, ghlNative)
}
