package apply

import (
	"cmp"
	"context"
	"errors"
	"slices"

	"github.com/leadgate/leadgate/lifecycle"
	"github.com/leadgate/leadgate/models"
)

// errClassic asks for a unit to be applied statement by statement instead (a merge: it rewrites other
// rows in place, which the batch's buffered writes cannot express).
var errClassic = errors.New("apply: this contact needs the statement-by-statement path")

// idKey is a live contact's email or phone within a workspace.
type idKey struct {
	ws    int64
	phone bool
	v     string
}

type contactEntry struct {
	c       models.Contact
	created bool // inserted when the batch is written
	dirty   bool // updated when the batch is written
}

// journalEntry is a contact's state before a change, to undo an event that failed.
type journalEntry struct {
	id   string
	prev *contactEntry // nil: the contact did not exist
}

// batchStore is one batch's view of its contacts: they were locked and read up front, every change is
// made in memory (so an event sees what the events before it did) and written at the end, one statement
// per table. Reads it cannot answer from memory go to the transaction it embeds, which also takes the
// dead letters (their ids name the alerts) and the audit records.
type batchStore struct {
	*models.Store // the batch's transaction
	contacts      map[string]*contactEntry
	live          map[idKey]string // contact id owning a key
	known         map[idKey]bool   // keys whose owner was read up front
	sources       map[int64]models.Source
	storedObs     map[string][]models.Observation  // nil: read on demand
	storedTypes   map[string][]string              // nil: read on demand
	eventTypes    map[string]string                // event type of each event in the batch
	resolutions   map[string]*lifecycle.Resolution // field resolutions kept since first use (FieldsWith)

	obs      []models.Observation
	history  []models.StageChange
	outbox   []models.OutboxRow
	outcomes []models.EventIDOutcome
	journal  []journalEntry
	later    *[]delayed
}

func newBatchStore(tx *models.Store, contacts []models.Contact, known []idKey, sources map[int64]models.Source, later *[]delayed) *batchStore {
	b := &batchStore{Store: tx, contacts: make(map[string]*contactEntry, len(contacts)), live: map[idKey]string{},
		known: make(map[idKey]bool, len(known)), sources: sources, later: later}
	for _, k := range known {
		b.known[k] = true
	}
	for _, c := range contacts {
		b.contacts[c.ID] = &contactEntry{c: c}
		b.index(c)
	}
	return b
}

func (b *batchStore) index(c models.Contact) {
	if c.MergedInto != nil {
		return
	}
	if c.Email != nil {
		b.live[idKey{c.WorkspaceID, false, *c.Email}] = c.ID
	}
	if c.Phone != nil && !c.PhoneShared {
		b.live[idKey{c.WorkspaceID, true, *c.Phone}] = c.ID
	}
}

func (b *batchStore) unindex(c models.Contact) {
	for _, k := range []struct {
		v     *string
		phone bool
	}{{c.Email, false}, {c.Phone, true}} {
		if k.v == nil {
			continue
		}
		key := idKey{c.WorkspaceID, k.phone, *k.v}
		if b.live[key] == c.ID {
			delete(b.live, key)
		}
	}
}

// mark is a point the batch can return to.
type mark struct{ obs, history, outbox, outcomes, journal, later int }

func (b *batchStore) mark() mark {
	return mark{len(b.obs), len(b.history), len(b.outbox), len(b.outcomes), len(b.journal), len(*b.later)}
}

// rollback undoes everything since m.
func (b *batchStore) rollback(m mark) {
	for i := len(b.journal) - 1; i >= m.journal; i-- {
		j := b.journal[i]
		if cur, ok := b.contacts[j.id]; ok {
			b.unindex(cur.c)
		}
		if j.prev == nil {
			delete(b.contacts, j.id)
			continue
		}
		b.contacts[j.id] = j.prev
		b.index(j.prev.c)
	}
	b.journal = b.journal[:m.journal]
	clear(b.resolutions) // they may hold observations undone here; rebuilt on next use
	b.obs, b.history, b.outbox, b.outcomes = b.obs[:m.obs], b.history[:m.history], b.outbox[:m.outbox], b.outcomes[:m.outcomes]
	*b.later = (*b.later)[:m.later]
}

// set records c as the contact's state, journaling the previous one.
func (b *batchStore) set(c models.Contact, created bool) {
	var prev *contactEntry
	if cur, ok := b.contacts[c.ID]; ok {
		p := *cur
		prev = &p
		b.unindex(cur.c)
		created = created || cur.created
	}
	b.journal = append(b.journal, journalEntry{id: c.ID, prev: prev})
	c.Tags = slices.Clone(c.Tags)
	b.contacts[c.ID] = &contactEntry{c: c, created: created, dirty: !created}
	b.index(c)
}

func (b *batchStore) copyOf(id string) (*models.Contact, bool) {
	e, ok := b.contacts[id]
	if !ok {
		return nil, false
	}
	c := e.c
	c.Tags = slices.Clone(c.Tags)
	return &c, true
}

func (b *batchStore) SourceGet(_ context.Context, workspaceID, id int64) (models.Source, error) {
	if src, ok := b.sources[id]; ok && src.WorkspaceID == workspaceID {
		return src, nil
	}
	return models.Source{}, models.ErrNotFound // the batch read every source its events name
}

func (b *batchStore) ContactsByIdentity(_ context.Context, workspaceID int64, email, phone string) (byEmail, byPhone *models.Contact, err error) {
	lookup := func(phoneKey bool, v string) (*models.Contact, error) {
		if v == "" {
			return nil, nil
		}
		k := idKey{workspaceID, phoneKey, v}
		if !b.known[k] {
			return nil, errClassic // outside what the batch locked and read
		}
		id, ok := b.live[k]
		if !ok {
			return nil, nil
		}
		c, _ := b.copyOf(id)
		return c, nil
	}
	if byEmail, err = lookup(false, email); err != nil {
		return nil, nil, err
	}
	byPhone, err = lookup(true, phone)
	return byEmail, byPhone, err
}

func (b *batchStore) ContactLockNoWait(_ context.Context, id string) (models.Contact, error) {
	if c, ok := b.copyOf(id); ok {
		return *c, nil
	}
	return models.Contact{}, errClassic
}

func (b *batchStore) ContactGet(ctx context.Context, workspaceID int64, id string) (models.Contact, error) {
	if c, ok := b.copyOf(id); ok && c.WorkspaceID == workspaceID {
		return *c, nil
	}
	return b.Store.ContactGet(ctx, workspaceID, id)
}

func (b *batchStore) ContactCreate(_ context.Context, c *models.Contact) error {
	for _, k := range []struct {
		v     *string
		phone bool
	}{{c.Email, false}, {c.Phone, true}} {
		if k.v == nil || (k.phone && c.PhoneShared) {
			continue
		}
		if owner, taken := b.live[idKey{c.WorkspaceID, k.phone, *k.v}]; taken && owner != c.ID {
			return models.ErrConflict
		}
	}
	b.set(*c, true)
	return nil
}

func (b *batchStore) ContactSave(_ context.Context, c *models.Contact) error {
	b.set(*c, false)
	return nil
}

func (b *batchStore) ContactMergeInto(context.Context, string, string) error { return errClassic }

func (b *batchStore) SyncMergeIntent(context.Context, int64, string, string) error { return errClassic }

func (b *batchStore) ContactAppliedEventTypes(ctx context.Context, contactID string) ([]string, error) {
	var types []string
	if stored, ok := b.storedTypes[contactID]; ok || b.storedTypes != nil {
		types = slices.Clone(stored)
	} else if e, ok := b.contacts[contactID]; !ok || !e.created {
		var err error
		if types, err = b.Store.ContactAppliedEventTypes(ctx, contactID); err != nil {
			return nil, err
		}
	}
	for _, o := range b.outcomes {
		if o.ContactID == contactID && o.Status == models.EventApplied {
			types = append(types, b.eventTypes[o.ID])
		}
	}
	return types, nil
}

func (b *batchStore) ObservationsForContact(ctx context.Context, contactID string) ([]models.Observation, error) {
	var all []models.Observation
	if stored, ok := b.storedObs[contactID]; ok || b.storedObs != nil {
		all = slices.Clone(stored)
	} else if e, ok := b.contacts[contactID]; !ok || !e.created {
		var err error
		if all, err = b.Store.ObservationsForContact(ctx, contactID); err != nil {
			return nil, err
		}
	}
	for _, o := range b.obs {
		if o.ContactID == contactID {
			all = append(all, o)
		}
	}
	return all, nil
}

func (b *batchStore) ObservationsAdd(_ context.Context, obs []models.Observation) error {
	b.obs = append(b.obs, obs...)
	b.resolveAdded(obs)
	return nil
}

func (b *batchStore) ObservationsAddAll(ctx context.Context, obs []models.Observation) error {
	return b.ObservationsAdd(ctx, obs)
}

func (b *batchStore) StageHistoryAdd(_ context.Context, c models.StageChange) error {
	b.history = append(b.history, c)
	return nil
}

func (b *batchStore) OutboxAdd(_ context.Context, r models.OutboxRow) (bool, error) {
	b.outbox = append(b.outbox, r)
	return true, nil
}

func (b *batchStore) OutboxAddAll(_ context.Context, rows []models.OutboxRow) error {
	b.outbox = append(b.outbox, rows...)
	return nil
}

func (b *batchStore) EventSetOutcome(_ context.Context, id string, o models.EventOutcome) error {
	b.outcomes = append(b.outcomes, models.EventIDOutcome{ID: id, EventOutcome: o})
	return nil
}

// flush writes the batch: the contacts first (the other rows reference them), then their observations,
// history and outbox rows, and the events' outcomes.
func (b *batchStore) flush(ctx context.Context) error {
	var created, updated []models.Contact
	for _, e := range b.contacts {
		switch {
		case e.created:
			created = append(created, e.c)
		case e.dirty:
			updated = append(updated, e.c)
		}
	}
	// A stable order: two batches never write the same contact, but a stable order keeps plans and
	// lock acquisition predictable.
	byID := func(x, y models.Contact) int { return cmp.Compare(x.ID, y.ID) }
	slices.SortFunc(created, byID)
	slices.SortFunc(updated, byID)
	if err := b.ContactsInsert(ctx, created); err != nil {
		return err
	}
	if err := b.ContactsUpdate(ctx, updated); err != nil {
		return err
	}
	if err := b.Store.ObservationsAddAll(ctx, b.obs); err != nil {
		return err
	}
	if err := b.StageHistoryAddAll(ctx, b.history); err != nil {
		return err
	}
	if err := b.Store.OutboxAddAll(ctx, b.outbox); err != nil {
		return err
	}
	return b.EventsSetOutcomes(ctx, lastOutcomes(b.outcomes))
}

// lastOutcomes keeps each event's last outcome.
func lastOutcomes(all []models.EventIDOutcome) []models.EventIDOutcome {
	at := make(map[string]int, len(all))
	out := make([]models.EventIDOutcome, 0, len(all))
	for _, o := range all {
		if i, ok := at[o.ID]; ok {
			out[i] = o
			continue
		}
		at[o.ID] = len(out)
		out = append(out, o)
	}
	return out
}
