package crm

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// Read-after-write. ActiveCampaign has no idempotency key, so a write whose answer cannot be trusted (a
// timeout or a 5xx after the request went out: the write may have landed) is checked with a look-up
// before anything is sent again: a phone-only POST /contacts repeated blindly creates a second record,
// and a repeated contact/sync starts the account's automations a second time. Every contact write carries
// the sync-timestamp field, so "our write landed" is "the record holds our loop flag and our stamp".

// untrusted reports whether err leaves it unknown whether the write happened.
func untrusted(ctx context.Context, err error) bool {
	return err != nil && ctx.Err() == nil && ClassOf(err) == Transient
}

// verifyCreate looks for the record a create whose answer was lost would have made: by email, else by the
// phone exactly as leadgate sent it (E.164). It returns the record's id when one holds this write.
func (a *activeCampaign) verifyCreate(ctx context.Context, c Contact, ids map[string]string, stamp string, calls *int) (string, bool, error) {
	q := url.Values{"email": {c.Email}}
	if c.Email == "" {
		q = url.Values{"phone": {c.Phone}}
	}
	var out struct {
		Contacts []acContact `json:"contacts"`
	}
	if _, err := a.api.do(ctx, call{method: http.MethodGet, path: "/contacts", query: q, out: &out}, calls); err != nil {
		return "", false, err
	}
	for _, r := range out.Contacts {
		if c.Email != "" && !strings.EqualFold(r.Email, c.Email) || c.Email == "" && !samePhone(r.Phone, c.Phone) {
			continue
		}
		ok, err := a.landed(ctx, string(r.ID), ids, stamp, calls)
		if err != nil {
			return "", false, err
		}
		if ok {
			return string(r.ID), true, nil
		}
	}
	return "", false, nil
}

// landed reads the contact and reports whether it holds the write stamped with stamp.
func (a *activeCampaign) landed(ctx context.Context, id string, ids map[string]string, stamp string, calls *int) (bool, error) {
	r, err := a.get(ctx, id, ids, calls)
	if err != nil {
		return false, err
	}
	return r.values[a.cfg.LoopField] == LoopValue && r.values[a.cfg.SyncField] == stamp, nil
}

// checkEcho catches a silent no-op: a 2xx whose body shows the record without this write (the answer
// lists the contact's field values, and the sync-timestamp field is missing or holds another time). An
// answer without field values says nothing either way and is trusted. The failure is transient: the next
// attempt reads the record again and plans against what it holds.
func (a *activeCampaign) checkEcho(out acContactOut, ids map[string]string, stamp, op string) error {
	if len(out.FieldValues) == 0 {
		return nil
	}
	syncID := ids[a.cfg.SyncField]
	for _, fv := range out.FieldValues {
		if string(fv.Field) == syncID && fv.Value == stamp {
			return nil
		}
	}
	held := "nothing"
	for _, fv := range out.FieldValues {
		if string(fv.Field) == syncID {
			held = fmt.Sprintf("%q", fv.Value)
		}
	}
	return &Error{Class: Transient, Message: fmt.Sprintf("activecampaign: %s: answered success but the record does not "+
		"hold the write (%s holds %s, sent %q): not applied, will be read and written again", op, a.cfg.SyncField, held, stamp)}
}
