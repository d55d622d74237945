package crm

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// How a contact record is written, checked against GoHighLevel's v2 description (apps/contacts.json):
//
//   - A lead with an email that no lookup matched is created explicitly (POST /contacts/,
//     CreateContactDto). POST /contacts/upsert is not used for it: its duplicate rule updates the first
//     contact matching by the location's priority (email or phone), so an email nobody holds and a phone
//     another person holds would overwrite that person's record: email, names, first-touch fields.
//     Create never writes to an existing record; when the location does not allow duplicates it answers
//     400 naming the holder (meta.contactId), which is read and written only when it is the lead's own.
//   - A phone-only lead that no lookup matched goes through upsert with the phone as its only identity, so
//     the rule can only match a record holding that phone, which is the lead's own (ours). The body leaves
//     first-touch fields out; upsert's answer is re-planned (new:false: re-read first) and the first-touch
//     fields follow in a PUT only where the record has none.
//   - A known record is updated with PUT /contacts/{id} (UpdateContactDto: it declares no companyName, so
//     the company is only ever set when the record is created).
//   - When another person's record holds the lead's phone and the location does not allow duplicates
//     (GET /locations/{id} settings.allowDuplicateContact), the phone is left out and reported as a
//     conflict instead of being refused with the whole contact.
//   - A write whose answer cannot be trusted (a lost answer, a 5xx, a 422, a 2xx without an id) is checked
//     with a lookup before it is reported: a record that now exists is the write's and is re-planned, so a
//     retry never creates a second one; no record means the write did not happen, and the error says so.

// ghlInserted is the record a write for an unmatched lead ended on.
type ghlInserted struct {
	id        string
	created   bool
	plan      plan       // what the create wrote (existing == nil)
	existing  *ghlRemote // the record to re-plan against: GHL matched one, or the write must be checked field by field
	conflicts []FieldConflict
}

type ghlCustomValue struct {
	ID         string `json:"id"`
	FieldValue any    `json:"field_value"`
}

// body builds the contact properties of a create, upsert or update from planned writes plus the
// loop-breaker flag. Tags are never sent: upsert and update overwrite the whole tag list.
func (g *goHighLevel) body(writes map[string]string, fields map[string]ghlField) map[string]any {
	in := map[string]any{}
	custom := []ghlCustomValue{}
	for _, k := range sortedKeys(writes) {
		if isNative(ghlNative, k) {
			in[k] = writes[k]
		} else {
			custom = append(custom, ghlCustomValue{ID: fields[k].ID, FieldValue: fields[k].encodeCustom(writes[k])})
		}
	}
	custom = append(custom,
		ghlCustomValue{ID: fields[g.cfg.LoopField].ID, FieldValue: LoopValue},
		ghlCustomValue{ID: fields[g.cfg.SyncField].ID, FieldValue: syncStamp(g.cfg)},
	)
	in["customFields"] = custom
	return in
}

// insert writes a lead that no lookup matched.
func (g *goHighLevel) insert(ctx context.Context, c Contact, wants []want, fields map[string]ghlField, f ghlFound, calls *int) (ghlInserted, error) {
	if c.Email == "" {
		return g.upsertByPhone(ctx, c, wants, fields, calls)
	}
	return g.create(ctx, c, wants, fields, f.phoneHolder, calls)
}

// unwrite takes key out of a plan: it is not sent, and Written keeps what leadgate last wrote there.
func unwrite(p *plan, prev map[string]string, key string) {
	delete(p.writes, key)
	if v, ok := prev[key]; ok {
		p.written[key] = v
	} else {
		delete(p.written, key)
	}
}

// heldBy is the conflict reported for a value left out because another person's record holds it.
func heldBy(key, ours, holder string) FieldConflict {
	return FieldConflict{Field: key, OurLast: ours, Remote: "held by another contact (" + holder + ")"}
}

// withoutPhone drops the phone from a plan because another person's record holds it.
func withoutPhone(p *plan, c Contact, holder string) FieldConflict {
	unwrite(p, c.Previous, ghlNative[namePhone])
	return heldBy(ghlNative[namePhone], c.Phone, holder)
}

// create writes a new record with POST /contacts/ (201 {"contact"}).
func (g *goHighLevel) create(ctx context.Context, c Contact, wants []want, fields map[string]ghlField, holder string, calls *int) (ghlInserted, error) {
	p := planWrites(wants, nil, false, c.Previous, nil)
	var conflicts []FieldConflict
	phoneKey := ghlNative[namePhone]
	if _, sends := p.writes[phoneKey]; sends && holder != "" {
		allow, err := g.allowDuplicates(ctx, calls)
		if err != nil {
			return ghlInserted{}, err
		}
		if !allow {
			conflicts = append(conflicts, withoutPhone(&p, c, holder))
		}
	}
	for {
		in := g.body(p.writes, fields)
		in["locationId"] = g.cfg.LocationID
		var out struct {
			Contact ghlContact `json:"contact"`
		}
		_, err := g.do(ctx, call{method: http.MethodPost, path: "/contacts/", in: in, out: &out}, calls)
		if err == nil && out.Contact.ID != "" {
			return ghlInserted{id: out.Contact.ID, created: true, plan: p, conflicts: conflicts}, nil
		}
		var e *Error
		if errors.As(err, &e) && e.ExistingID != "" {
			// The location does not allow the duplicate and named the record holding the email or phone.
			r, gerr := g.get(ctx, e.ExistingID, fields, calls)
			if gerr != nil {
				return ghlInserted{}, gerr
			}
			if ours(c, r) {
				return ghlInserted{id: r.id, existing: &r, conflicts: conflicts}, nil
			}
			if _, sent := p.writes[phoneKey]; sent && samePhone(r.phone, c.Phone) {
				conflicts = append(conflicts, withoutPhone(&p, c, r.id))
				continue
			}
			return ghlInserted{}, err
		}
		if err == nil {
			err = &Error{Class: Transient, Message: "gohighlevel: POST /contacts/: the answer has no contact id"}
		}
		ins, err := g.checkWrite(ctx, c, fields, err, calls)
		ins.conflicts = conflicts
		return ins, err
	}
}

// upsertByPhone writes a phone-only lead through POST /contacts/upsert (200 {"new","contact"}).
func (g *goHighLevel) upsertByPhone(ctx context.Context, c Contact, wants []want, fields map[string]ghlField, calls *int) (ghlInserted, error) {
	writes := map[string]string{}
	for _, w := range wants {
		if !w.firstTouch {
			writes[w.key] = w.value
		}
	}
	in := g.body(writes, fields)
	in["locationId"] = g.cfg.LocationID
	var out struct {
		New     bool       `json:"new"`
		Contact ghlContact `json:"contact"`
	}
	_, err := g.do(ctx, call{method: http.MethodPost, path: "/contacts/upsert", in: in, out: &out}, calls)
	if err == nil && out.Contact.ID == "" {
		err = &Error{Class: Transient, Message: "gohighlevel: POST /contacts/upsert: the answer has no contact id"}
	}
	if err != nil {
		return g.checkWrite(ctx, c, fields, err, calls)
	}
	if out.New {
		r := g.remote(out.Contact, fields)
		return ghlInserted{id: r.id, created: true, existing: &r}, nil
	}
	// new:false: GHL wrote a record the lookups did not find (a phone stored in another form, or a search
	// index that lags). Re-read it and re-plan against what is there.
	r, err := g.get(ctx, out.Contact.ID, fields, calls)
	if err != nil {
		return ghlInserted{}, err
	}
	if !ours(c, r) {
		slog.ErrorContext(ctx, "gohighlevel: upsert matched a record whose phone is not the lead's", "contact", r.id, "lead", c.LeadgateID)
		return ghlInserted{}, &Error{Class: Invalid, Message: "gohighlevel: upsert by phone " + c.Phone + " matched contact " + r.id +
			", whose phone " + r.phone + " is another number; the contact is not written further"}
	}
	return ghlInserted{id: r.id, existing: &r}, nil
}

// untrustedAnswer reports whether a write's failure leaves its outcome unknown: no answer (a timeout or a
// lost connection), a 5xx, a 2xx that could not be read, or a 422 (GHL has answered 422 to a create that
// still created the contact).
func untrustedAnswer(err error) bool {
	var e *Error
	if !errors.As(err, &e) {
		return true
	}
	switch e.Class {
	case Transient:
		return true
	case Invalid:
		return e.Status == http.StatusUnprocessableEntity
	}
	return false
}

// checkWrite looks the lead up after a write whose answer cannot be trusted. A record that is the lead's
// own now exists: the write happened (GHL created it) and it is re-planned field by field, so nothing is
// created twice. No record: the write did not happen, and the error says that it was checked.
func (g *goHighLevel) checkWrite(ctx context.Context, c Contact, fields map[string]ghlField, err error, calls *int) (ghlInserted, error) {
	if ctx.Err() != nil || !untrustedAnswer(err) {
		return ghlInserted{}, err
	}
	f, ferr := g.find(ctx, Contact{LeadgateID: c.LeadgateID, Email: c.Email, Phone: c.Phone}, fields, calls)
	if ferr != nil {
		return ghlInserted{}, err
	}
	if f.own.id != "" {
		slog.WarnContext(ctx, "gohighlevel: a write answered with an error had created the contact; it is checked field by field",
			"contact", f.own.id, "lead", c.LeadgateID, "err", err)
		return ghlInserted{id: f.own.id, created: true, existing: &f.own}, nil
	}
	var e *Error
	if errors.As(err, &e) {
		e2 := *e
		e2.Message += " (checked: no contact with this email or phone exists, so the write did not happen)"
		return ghlInserted{}, &e2
	}
	return ghlInserted{}, err
}

// planUpdate plans the writes to an existing record. PUT /contacts/{id} (UpdateContactDto) has no
// companyName: the company set when the record was created stays, and Written keeps what it was.
func planUpdate(wants []want, r ghlRemote, prev map[string]string, doubt Doubt) plan {
	p := planWrites(wants, r.values, true, prev, doubt)
	if _, ok := p.writes[ghlNative[nameCompany]]; ok {
		unwrite(&p, prev, ghlNative[nameCompany])
	}
	return p
}

// update writes p to an existing record with PUT /contacts/{id}. When the location refuses the write as a
// duplicate (400 naming another record), the field that record holds (email or phone) is left out and
// reported as a conflict, and the rest is written.
func (g *goHighLevel) update(ctx context.Context, id string, c Contact, p *plan, fields map[string]ghlField, calls *int) ([]FieldConflict, error) {
	var conflicts []FieldConflict
	for {
		_, err := g.do(ctx, call{method: http.MethodPut, path: "/contacts/" + pathID(id), in: g.body(p.writes, fields)}, calls)
		var e *Error
		if err == nil || !errors.As(err, &e) || e.ExistingID == "" || e.ExistingID == id {
			return conflicts, err
		}
		other, gerr := g.get(ctx, e.ExistingID, fields, calls)
		if gerr != nil {
			return conflicts, err
		}
		emailKey, phoneKey := ghlNative[nameEmail], ghlNative[namePhone]
		key, ours := "", ""
		switch {
		case p.writes[emailKey] != "" && strings.EqualFold(other.email, p.writes[emailKey]):
			key, ours = emailKey, p.writes[emailKey]
		case p.writes[phoneKey] != "" && samePhone(other.phone, p.writes[phoneKey]):
			key, ours = phoneKey, p.writes[phoneKey]
		default:
			return conflicts, err
		}
		unwrite(p, c.Previous, key)
		conflicts = append(conflicts, heldBy(key, ours, other.id))
	}
}

// allowDuplicates reads the location's "Allow Duplicate Contact" setting once (GET /locations/{id},
// settings.allowDuplicateContact). A token without the locations scope cannot read it: the location is
// then taken not to allow duplicates, the safe assumption (the phone is left out, not the contact).
func (g *goHighLevel) allowDuplicates(ctx context.Context, calls *int) (bool, error) {
	g.mu.Lock()
	known, allow := g.dupKnown, g.dupAllowed
	g.mu.Unlock()
	if known {
		return allow, nil
	}
	var out struct {
		Location struct {
			Settings struct {
				AllowDuplicateContact bool `json:"allowDuplicateContact"`
			} `json:"settings"`
		} `json:"location"`
	}
	_, err := g.do(ctx, call{method: http.MethodGet, path: "/locations/" + pathID(g.cfg.LocationID), out: &out}, calls)
	switch {
	case err == nil:
		allow = out.Location.Settings.AllowDuplicateContact
	case ClassOf(err) == Auth || ClassOf(err) == NotFound:
		slog.WarnContext(ctx, "gohighlevel: cannot read the location's duplicate setting; taking it as not allowing duplicates",
			"location", g.cfg.LocationID, "err", err)
		allow = false
	default:
		return false, err
	}
	g.mu.Lock()
	g.dupKnown, g.dupAllowed = true, allow
	g.mu.Unlock()
	return allow, nil
}

// normalizeWants makes custom field values comparable with what GHL answers: the options of a
// multi-valued field as a sorted set, a number as its shortest form ("1200.50" is read back as 1200.5).
func normalizeWants(wants []want, fields map[string]ghlField) []want {
	out := slices.Clone(wants)
	for i, w := range out {
		f, ok := fields[w.key]
		switch {
		case !ok:
		case f.multi():
			out[i].value = strings.Join(splitMulti(w.value), ";")
		case f.numeric():
			if n, err := strconv.ParseFloat(strings.TrimSpace(w.value), 64); err == nil {
				out[i].value = strconv.FormatFloat(n, 'f', -1, 64)
			}
		}
	}
	return out
}
