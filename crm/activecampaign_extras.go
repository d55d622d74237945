package crm

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
)

// applyTags attaches the tags leadgate has not applied before. AC tags are additive here: removing one
// needs the contactTag id (an extra read per tag), and a tag a human added must never be removed.
func (a *activeCampaign) applyTags(ctx context.Context, contactID string, c Contact, written map[string]string, calls *int) error {
	add, _, joined := tagChanges(c.Tags, c.Previous)
	for _, name := range add {
		tagID, err := a.tagID(ctx, name, calls)
		if err != nil {
			return err
		}
		in := map[string]any{"contactTag": map[string]any{"contact": contactID, "tag": tagID}}
		_, err = a.api.do(ctx, call{method: http.MethodPost, path: "/contactTags", in: in}, calls)
		if untrusted(ctx, err) {
			if has, herr := a.hasTag(ctx, contactID, tagID, calls); herr == nil && has {
				err = nil // the tag landed: not attached twice
			}
		}
		if err != nil {
			return err
		}
	}
	if joined != "" || written[PrevTags] != "" {
		written[PrevTags] = joined
	}
	return nil
}

// hasTag reports whether the contact carries the tag (GET /contacts/{id}/contactTags, every page).
func (a *activeCampaign) hasTag(ctx context.Context, contactID, tagID string, calls *int) (bool, error) {
	type contactTag struct {
		Tag flexString `json:"tag"`
	}
	tags, err := acListAll[contactTag](ctx, a.api, "/contacts/"+pathID(contactID)+"/contactTags", nil, "contactTags", calls)
	if err != nil {
		return false, err
	}
	for _, ct := range tags {
		if string(ct.Tag) == tagID {
			return true, nil
		}
	}
	return false, nil
}

type acTag struct {
	ID  flexString `json:"id"`
	Tag string     `json:"tag"`
}

// tagID finds a tag by name or creates it; ids are cached. Tag names match without regard to letter case
// ("Webinar" is the account's tag for "webinar"): the look-up uses the exact filter (filters[search][eq]:
// a "contains" search returns a page of near names, and an account with more than a page of them would
// hide the exact one) and compares case-insensitively. A create refused because the tag now exists (a
// concurrent create) is answered by looking it up again.
func (a *activeCampaign) tagID(ctx context.Context, name string, calls *int) (string, error) {
	key := strings.ToLower(name)
	a.mu.Lock()
	id, ok := a.tagIDs[key]
	a.mu.Unlock()
	if ok {
		return id, nil
	}
	id, err := a.findTag(ctx, name, calls)
	if err != nil {
		return "", err
	}
	if id == "" {
		in := map[string]any{"tag": map[string]any{"tag": name, "tagType": "contact", "description": ""}}
		var out struct {
			Tag acTag `json:"tag"`
		}
		_, err := a.api.do(ctx, call{method: http.MethodPost, path: "/tags", in: in, out: &out}, calls)
		switch {
		case err != nil && ClassOf(err) == Invalid:
			if id, err = a.findTag(ctx, name, calls); err != nil {
				return "", err
			}
		case err != nil:
			return "", err
		default:
			id = string(out.Tag.ID)
		}
	}
	if id == "" {
		return "", &Error{Class: Transient, Message: "activecampaign: tag " + name + ": no id in response"}
	}
	a.mu.Lock()
	a.tagIDs[key] = id
	a.mu.Unlock()
	return id, nil
}

// findTag returns the id of the tag named name in any letter case ("" when there is none); of several,
// the oldest.
func (a *activeCampaign) findTag(ctx context.Context, name string, calls *int) (string, error) {
	tags, err := acListAll[acTag](ctx, a.api, "/tags", url.Values{"filters[search][eq]": {name}}, "tags", calls)
	if err != nil {
		return "", err
	}
	id := ""
	for _, t := range tags {
		if strings.EqualFold(strings.TrimSpace(t.Tag), strings.TrimSpace(name)) && (id == "" || lessID(string(t.ID), id)) {
			id = string(t.ID)
		}
	}
	return id, nil
}

// addNote appends the submission summary to the contact. An untrusted answer is checked by listing the
// contact's notes (GET /contacts/{id}/notes, every page): a note that landed is not appended twice.
func (a *activeCampaign) addNote(ctx context.Context, contactID, note string, calls *int) error {
	in := map[string]any{"note": map[string]any{"note": note, "relid": contactID, "reltype": "Subscriber"}}
	_, err := a.api.do(ctx, call{method: http.MethodPost, path: "/notes", in: in}, calls)
	if !untrusted(ctx, err) {
		return err
	}
	type acNote struct {
		Note string `json:"note"`
	}
	notes, lerr := acListAll[acNote](ctx, a.api, "/contacts/"+pathID(contactID)+"/notes", nil, "notes", calls)
	if lerr != nil {
		return err
	}
	for _, n := range notes {
		if n.Note == note {
			return nil
		}
	}
	return err
}

// Discover lists custom fields, deal pipelines with their stages (every page of each), and checks the
// loop-breaker fields.
func (a *activeCampaign) Discover(ctx context.Context) (Discovery, error) {
	var d Discovery
	fields, err := acListAll[acField](ctx, a.api, "/fields", nil, "fields", nil)
	if err != nil {
		return d, err
	}
	for _, f := range fields {
		d.Fields = append(d.Fields, RemoteField{ID: string(f.ID), Key: f.Perstag, Label: f.Title, Type: f.Type})
	}
	type group struct {
		ID    flexString `json:"id"`
		Title string     `json:"title"`
	}
	groups, err := acListAll[group](ctx, a.api, "/dealGroups", nil, "dealGroups", nil)
	if err != nil {
		return d, err
	}
	type stage struct {
		ID    flexString `json:"id"`
		Title string     `json:"title"`
		Group flexString `json:"group"`
		Order flexString `json:"order"`
	}
	stages, err := acListAll[stage](ctx, a.api, "/dealStages", nil, "dealStages", nil)
	if err != nil {
		return d, err
	}
	for _, g := range groups {
		p := Pipeline{ID: string(g.ID), Label: g.Title}
		for _, s := range stages {
			if s.Group == g.ID {
				p.Stages = append(p.Stages, Option{Value: string(s.ID), Label: s.Title, Order: atoiOr(string(s.Order), 0)})
			}
		}
		d.Pipelines = append(d.Pipelines, p)
	}
	idx := map[string]bool{}
	for _, f := range fields {
		idx[fieldKey(f.Perstag)], idx[fieldKey(f.Title)], idx[string(f.ID)] = true, true, true
	}
	d.Loop = LoopCheck{
		LoopField: a.cfg.LoopField, LoopFieldFound: idx[fieldKey(a.cfg.LoopField)],
		SyncField: a.cfg.SyncField, SyncFieldFound: idx[fieldKey(a.cfg.SyncField)],
		CanCreate: true,
	}
	if !d.Loop.LoopFieldFound || !d.Loop.SyncFieldFound {
		d.Loop.Instructions = loopInstructions("ActiveCampaign (Contacts > Fields)", a.cfg.LoopField, a.cfg.SyncField)
	}
	return d, nil
}

// CreateLoopFields creates the missing loop-breaker fields as text fields visible on all lists.
func (a *activeCampaign) CreateLoopFields(ctx context.Context) error {
	a.forgetFields()
	known, _, err := a.fieldIndex(ctx, nil)
	if err != nil {
		return err
	}
	var errs []error
	for _, name := range []string{a.cfg.LoopField, a.cfg.SyncField} {
		if _, ok := known[fieldKey(name)]; ok {
			continue
		}
		if err := a.createTextField(ctx, name); err != nil {
			errs = append(errs, err)
		}
	}
	a.forgetFields()
	return errors.Join(errs...)
}
