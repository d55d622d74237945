package sandbox

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/leadgate/leadgate/crm"
)

// Record is a sandbox contact.
type Record struct {
	ID            int64             `json:"id"`
	DestinationID int64             `json:"-"`
	Email         *string           `json:"email"`
	Phone         *string           `json:"phone"`
	FirstName     string            `json:"first_name"`
	LastName      string            `json:"last_name"`
	Company       string            `json:"company"`
	Stage         string            `json:"stage"`
	Fields        map[string]string `json:"fields" gorm:"serializer:json;type:jsonb"`
	Tags          []string          `json:"tags" gorm:"serializer:json;type:jsonb"`
	Notes         []string          `json:"notes" gorm:"serializer:json;type:jsonb"`
	CreatedAt     time.Time         `json:"created_at"`
	UpdatedAt     time.Time         `json:"updated_at"`
}

// TableName maps Record to sandbox_contacts.
func (Record) TableName() string { return "sandbox_contacts" }

// Values returns the record's field values keyed as in crm.Result.Written.
func (r Record) Values() map[string]string {
	v := maps.Clone(r.Fields)
	if v == nil {
		v = map[string]string{}
	}
	v[FieldEmail], v[FieldPhone] = deref(r.Email), deref(r.Phone)
	v[FieldFirstName], v[FieldLastName], v[FieldCompany], v[FieldStage] = r.FirstName, r.LastName, r.Company, r.Stage
	return v
}

// Upsert implements crm.Destination: one request for the whole batch, then each contact is found by
// remote id, else email, else phone, and updated field by field (an empty value never erases, first-touch
// fields are only filled, a field changed since leadgate's last write is left alone and reported), or
// inserted.
func (s *Sandbox) Upsert(ctx context.Context, batch []crm.Contact) []crm.Result {
	out := make([]crm.Result, len(batch))
	if err := s.admit(ctx); err != nil {
		for i, c := range batch {
			out[i] = crm.Result{LeadgateID: c.LeadgateID, RemoteID: c.RemoteID, Err: err, Calls: 1, Written: c.Previous}
		}
		return out
	}
	for i, c := range batch {
		out[i] = s.upsertOne(ctx, c)
	}
	return out
}

func (s *Sandbox) upsertOne(ctx context.Context, c crm.Contact) crm.Result {
	res := crm.Result{LeadgateID: c.LeadgateID, RemoteID: c.RemoteID, Calls: 1, Written: c.Previous}
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		rec, found, err := s.find(tx, c)
		if err != nil {
			return err
		}
		written := maps.Clone(c.Previous)
		if written == nil {
			written = map[string]string{}
		}
		remote := rec.Values()
		for _, w := range s.wants(c) {
			cur := remote[w.key]
			switch {
			case !found:
			case sameValue(cur, w.value):
				if !w.firstTouch {
					written[w.key] = w.value // the record holds our value: the baseline for edit detection
				}
				continue
			case w.firstTouch && strings.TrimSpace(cur) != "":
				continue // first-touch attribution already set: never overwritten
			case hasKey(c.Previous, w.key) && !sameValue(cur, c.Previous[w.key]):
				res.Conflicts = append(res.Conflicts, crm.FieldConflict{Field: w.key, OurLast: c.Previous[w.key], Remote: cur})
				continue
			}
			remote[w.key] = w.value
			if !w.firstTouch {
				written[w.key] = w.value
			}
		}
		remote[s.opts.LoopField] = crm.LoopValue
		remote[s.opts.SyncField] = s.opts.Now().UTC().Format(time.RFC3339Nano)
		rec.apply(remote)
		rec.Tags = union(rec.Tags, c.Tags)
		if n := strings.TrimSpace(c.Note); n != "" && n != c.Previous[crm.PrevNote] {
			rec.Notes = append(rec.Notes, n)
			written[crm.PrevNote] = n
		}
		if rec.Notes == nil {
			rec.Notes = []string{}
		}
		if rec.Tags == nil {
			rec.Tags = []string{}
		}
		rec.UpdatedAt = s.opts.Now().UTC()
		if !found {
			rec.DestinationID, rec.CreatedAt = s.destID, rec.UpdatedAt
			if err := tx.Create(&rec).Error; err != nil {
				return err
			}
			res.Created = true
		} else if err := tx.Save(&rec).Error; err != nil {
			return err
		}
		res.RemoteID, res.Written = strconv.FormatInt(rec.ID, 10), written
		return nil
	})
	if err != nil {
		res.Err = &crm.Error{Class: crm.Transient, Message: fmt.Sprintf("sandbox: upsert %s: %v", c.LeadgateID, err)}
		res.Written = c.Previous
	}
	return res
}

// find locates the record by remote id, then email (case-insensitive), then phone (exact), locking it.
func (s *Sandbox) find(tx *gorm.DB, c crm.Contact) (Record, bool, error) {
	var rec Record
	try := func(where string, arg any) (bool, error) {
		err := tx.Clauses(clause.Locking{Strength: "UPDATE"}).Where("destination_id = ? AND "+where, s.destID, arg).Take(&rec).Error
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return false, nil
		}
		return err == nil, err
	}
	if id, err := strconv.ParseInt(c.RemoteID, 10, 64); err == nil {
		if ok, err := try("id = ?", id); ok || err != nil {
			return rec, ok, err
		}
	}
	if c.Email != "" {
		if ok, err := try("lower(email) = lower(?)", c.Email); ok || err != nil {
			return rec, ok, err
		}
	}
	if c.Phone != "" {
		if ok, err := try("phone = ?", c.Phone); ok || err != nil {
			return rec, ok, err
		}
	}
	return Record{Fields: map[string]string{}}, false, nil
}

type want struct {
	key, value string
	firstTouch bool
}

// wants lists the non-empty values leadgate wants the record to hold.
func (s *Sandbox) wants(c crm.Contact) []want {
	var out []want
	add := func(k, v string, ft bool) {
		if strings.TrimSpace(v) != "" && k != s.opts.LoopField && k != s.opts.SyncField {
			out = append(out, want{k, v, ft})
		}
	}
	add(FieldEmail, c.Email, false)
	add(FieldPhone, c.Phone, false)
	add(FieldFirstName, c.FirstName, false)
	add(FieldLastName, c.LastName, false)
	add(FieldCompany, c.Company, false)
	add(FieldStage, c.Stage, false)
	if c.Score != 0 {
		add("score", strconv.Itoa(c.Score), false)
	}
	if c.SubmissionCount != 0 {
		add("submission_count", strconv.Itoa(c.SubmissionCount), false)
	}
	if !c.LastActivityAt.IsZero() {
		add("last_activity_at", c.LastActivityAt.UTC().Format(time.RFC3339), false)
	}
	for _, k := range slices.Sorted(maps.Keys(c.Fields)) {
		add(k, c.Fields[k], false)
	}
	for _, k := range slices.Sorted(maps.Keys(c.FirstTouch)) {
		add("first_"+k, c.FirstTouch[k], true)
	}
	return out
}

// apply writes values back into the record's columns and custom fields.
func (r *Record) apply(v map[string]string) {
	r.Email, r.Phone = opt(v[FieldEmail]), opt(v[FieldPhone])
	r.FirstName, r.LastName, r.Company, r.Stage = v[FieldFirstName], v[FieldLastName], v[FieldCompany], v[FieldStage]
	r.Fields = map[string]string{}
	for k, val := range v {
		switch k {
		case FieldEmail, FieldPhone, FieldFirstName, FieldLastName, FieldCompany, FieldStage:
		default:
			r.Fields[k] = val
		}
	}
}

func union(a, b []string) []string {
	set := map[string]bool{}
	for _, t := range append(slices.Clone(a), b...) {
		if t = strings.TrimSpace(t); t != "" {
			set[t] = true
		}
	}
	return slices.Sorted(maps.Keys(set))
}

// sameValue compares values as a CRM echoes them: surrounding space and letter case do not count.
func sameValue(a, b string) bool {
	return strings.EqualFold(strings.TrimSpace(a), strings.TrimSpace(b))
}

func hasKey(m map[string]string, k string) bool {
	_, ok := m[k]
	return ok
}

func opt(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
