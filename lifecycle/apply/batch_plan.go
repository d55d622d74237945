package apply

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/leadgate/leadgate/models"
)

// unit is the events of one batch that belong together: they share an email or a phone, directly or
// through a contact that has both. A unit is applied in occurred_at order under the locks of all its
// keys; units share no key and no contact, so their order does not matter.
type unit struct {
	ws     int64
	keys   []idKey
	events []models.Event
}

// batchPlan is a batch's units, sorted into those whose keys it locked and those another worker holds.
type batchPlan struct {
	ready, busy []*unit
	contacts    []models.Contact // the ready units' contacts, locked
	known       []idKey          // every key of a ready unit: its owner (or its absence) is in contacts
}

// ownKeys are an event's own email and phone.
func ownKeys(ev models.Event) []idKey {
	var ks []idKey
	if ev.Email != nil {
		ks = append(ks, idKey{ev.WorkspaceID, false, *ev.Email})
	}
	if ev.Phone != nil {
		ks = append(ks, idKey{ev.WorkspaceID, true, *ev.Phone})
	}
	return ks
}

// ownedKeys are the keys a contact owns (an email, a phone that is not shared).
func ownedKeys(c models.Contact) []idKey {
	var ks []idKey
	if c.Email != nil {
		ks = append(ks, idKey{c.WorkspaceID, false, *c.Email})
	}
	if c.Phone != nil && !c.PhoneShared {
		ks = append(ks, idKey{c.WorkspaceID, true, *c.Phone})
	}
	return ks
}

// lockName is a key's advisory lock, named as every locker of identities names it (see lockKeys).
func (k idKey) lockName() string {
	kind := 'e'
	if k.phone {
		kind = 'p'
	}
	return fmt.Sprintf("lg:%d:%c:%s", k.ws, kind, k.v)
}

func identityKeysOf(keys []idKey) models.IdentityKeys {
	var out models.IdentityKeys
	for _, k := range keys {
		if k.phone {
			out.AddPhone(k.ws, k.v)
		} else {
			out.AddEmail(k.ws, k.v)
		}
	}
	return out
}

// plan groups the claimed events into units, takes the advisory locks of every unit's keys (try-locks:
// a unit whose key another worker holds is left for a later batch), locks the ready units' contacts
// and adds each ready unit's other pending events, up to perKey for each of its keys.
func (a *Applier) plan(ctx context.Context, tx *models.Store, claimed []models.Event, now time.Time, perKey int) (*batchPlan, error) {
	var lookup []idKey
	seen := map[idKey]bool{}
	for _, ev := range claimed {
		for _, k := range ownKeys(ev) {
			if !seen[k] {
				seen[k] = true
				lookup = append(lookup, k)
			}
		}
	}
	owners, err := tx.ContactsByKeys(ctx, identityKeysOf(lookup), false)
	if err != nil {
		return nil, err
	}
	ownerOf := map[idKey]string{}
	for _, c := range owners {
		for _, k := range ownedKeys(c) {
			ownerOf[k] = c.ID
		}
	}
	byID := make(map[string]models.Contact, len(owners))
	for _, c := range owners {
		byID[c.ID] = c
	}

	// Events sharing a key, or a contact, are one unit.
	var sets disjointSets
	keysOf := make([][]idKey, len(claimed))
	for i, ev := range claimed {
		ks := ownKeys(ev)
		for _, k := range ownKeys(ev) {
			if id, ok := ownerOf[k]; ok {
				ks = append(ks, ownedKeys(byID[id])...)
			}
		}
		keysOf[i] = ks
		for _, k := range ks[min(1, len(ks)):] {
			sets.union(ks[0], k)
		}
	}
	units := map[idKey]*unit{}
	var all []*unit
	for i, ev := range claimed {
		if len(keysOf[i]) == 0 {
			all = append(all, &unit{ws: ev.WorkspaceID, events: []models.Event{ev}})
			continue
		}
		root := sets.find(keysOf[i][0])
		u := units[root]
		if u == nil {
			u = &unit{ws: ev.WorkspaceID}
			units[root] = u
			all = append(all, u)
		}
		u.events = append(u.events, ev)
		u.keys = append(u.keys, keysOf[i]...)
	}
	var names []string
	for _, u := range all {
		u.keys = dedupeKeys(u.keys)
		for _, k := range u.keys {
			names = append(names, k.lockName())
		}
	}
	slices.Sort(names)
	got, err := tx.TryAdvisoryXactLocksEach(ctx, slices.Compact(names))
	if err != nil {
		return nil, err
	}

	p := &batchPlan{}
	keyUnit := map[idKey]*unit{}
	for _, u := range all {
		locked := true
		for _, k := range u.keys {
			locked = locked && got[k.lockName()]
		}
		if !locked {
			p.busy = append(p.busy, u)
			continue
		}
		p.ready = append(p.ready, u)
		for _, k := range u.keys {
			keyUnit[k] = u
			p.known = append(p.known, k)
		}
	}

	// Lock the ready units' contacts and read them again: a contact another transaction holds is left
	// out, and one that changed since the first read changes the unit, so such units wait for a later batch.
	locked, err := tx.ContactsByKeys(ctx, identityKeysOf(p.known), true)
	if err != nil {
		return nil, err
	}
	lockedOwner := map[idKey]string{}
	for _, c := range locked {
		for _, k := range ownedKeys(c) {
			lockedOwner[k] = c.ID
		}
	}
	changed := map[*unit]bool{}
	for _, k := range p.known {
		if ownerOf[k] != lockedOwner[k] {
			changed[keyUnit[k]] = true
		}
	}
	if len(changed) > 0 {
		p.ready, p.busy = splitUnits(p.ready, p.busy, changed)
		p.known = p.known[:0]
		clear(keyUnit)
		for _, u := range p.ready {
			for _, k := range u.keys {
				keyUnit[k] = u
				p.known = append(p.known, k)
			}
		}
	}
	for _, c := range locked {
		if ks := ownedKeys(c); len(ks) > 0 && keyUnit[ks[0]] != nil {
			p.contacts = append(p.contacts, c)
		}
	}

	// Each ready unit's other pending events, so that its backlog is applied in order.
	claimedIDs := make([]string, len(claimed))
	for i, ev := range claimed {
		claimedIDs[i] = ev.ID
	}
	peers, err := tx.EventsPendingForKeys(ctx, identityKeysOf(p.known), claimedIDs, now, perKey)
	if err != nil {
		return nil, err
	}
	for _, ev := range peers {
		var home *unit
		for _, k := range ownKeys(ev) {
			u := keyUnit[k]
			if u == nil || (home != nil && u != home) {
				home = nil // beyond the locked keys: a later batch applies it
				break
			}
			home = u
		}
		if home != nil {
			home.events = append(home.events, ev)
		}
	}
	for _, u := range p.ready {
		slices.SortStableFunc(u.events, func(x, y models.Event) int {
			if c := x.OccurredAt.Compare(y.OccurredAt); c != 0 {
				return c
			}
			if c := x.ReceivedAt.Compare(y.ReceivedAt); c != 0 {
				return c
			}
			return cmp.Compare(x.ID, y.ID)
		})
	}
	return p, nil
}

func splitUnits(ready, busy []*unit, out map[*unit]bool) ([]*unit, []*unit) {
	var keep []*unit
	for _, u := range ready {
		if out[u] {
			busy = append(busy, u)
		} else {
			keep = append(keep, u)
		}
	}
	return keep, busy
}

func dedupeKeys(ks []idKey) []idKey {
	seen := make(map[idKey]bool, len(ks))
	out := ks[:0]
	for _, k := range ks {
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}

// disjointSets is a union-find over identity keys.
type disjointSets struct{ parent map[idKey]idKey }

func (d *disjointSets) find(k idKey) idKey {
	if d.parent == nil {
		d.parent = map[idKey]idKey{}
	}
	p, ok := d.parent[k]
	if !ok || p == k {
		return k
	}
	root := d.find(p)
	d.parent[k] = root
	return root
}

func (d *disjointSets) union(a, b idKey) {
	ra, rb := d.find(a), d.find(b)
	if ra != rb {
		d.parent[ra] = rb
	}
}
