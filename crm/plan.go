package crm

import (
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Leadgate names of the built-in values that FieldMap (or an adapter's native field) can route.
const (
	nameEmail           = "email"
	namePhone           = "phone"
	nameFirstName       = "first_name"
	nameLastName        = "last_name"
	nameCompany         = "company"
	nameScore           = "score"
	nameSubmissionCount = "submission_count"
	nameLastActivityAt  = "last_activity_at"
	nameTags            = "tags"
)

// want is one remote field leadgate wants to hold a value.
type want struct {
	key        string // remote field key, as used in Contact.Previous
	value      string
	firstTouch bool // write only when the remote value is empty
}

// wants lists the remote fields c should hold. native maps leadgate built-in names to the CRM's native
// contact fields; Config.FieldMap adds and overrides. Empty values are omitted: they never erase anything.
func (cfg Config) wants(c Contact, native map[string]string) ([]want, error) {
	var out []want
	add := func(key, value string, firstTouch bool) {
		if key == "" || strings.TrimSpace(value) == "" || key == cfg.LoopField || key == cfg.SyncField {
			return
		}
		out = append(out, want{key: key, value: value, firstTouch: firstTouch})
	}
	route := func(name string) string {
		if k, ok := cfg.FieldMap[name]; ok {
			return k
		}
		return native[name]
	}
	add(route(nameEmail), c.Email, false)
	add(route(namePhone), c.Phone, false)
	add(route(nameFirstName), c.FirstName, false)
	add(route(nameLastName), c.LastName, false)
	add(route(nameCompany), c.Company, false)
	if c.Score != 0 {
		add(route(nameScore), strconv.Itoa(c.Score), false)
	}
	if c.SubmissionCount != 0 {
		add(route(nameSubmissionCount), strconv.Itoa(c.SubmissionCount), false)
	}
	if !c.LastActivityAt.IsZero() {
		add(route(nameLastActivityAt), c.LastActivityAt.UTC().Format(time.RFC3339), false)
	}
	if len(c.Tags) > 0 {
		add(route(nameTags), strings.Join(sortedSet(c.Tags), ";"), false)
	}
	for _, name := range slices.Sorted(maps.Keys(c.Fields)) {
		add(cfg.FieldMap[name], c.Fields[name], false)
	}
	for _, name := range slices.Sorted(maps.Keys(c.FirstTouch)) {
		add(cfg.FieldMap[name], c.FirstTouch[name], true)
	}
	if cfg.StageMode == StageModeField && c.Stage != "" && cfg.StageField != "" {
		v, err := cfg.remoteStage(c.Stage)
		if err != nil {
			return nil, err
		}
		add(cfg.StageField, v, false)
	}
	return out, nil
}

// remoteStage maps a leadgate stage through StageMap; with no StageMap the name is written as is.
func (cfg Config) remoteStage(stage string) (string, error) {
	if len(cfg.StageMap) == 0 {
		return stage, nil
	}
	v, ok := cfg.StageMap[stage]
	if !ok || v == "" {
		return "", invalidf("stage %q has no mapping in stage_map", stage)
	}
	return v, nil
}

// plan is what to write to one contact after comparing wants with the remote record.
type plan struct {
	writes    map[string]string
	conflicts []FieldConflict
	written   map[string]string // the next Previous
}

// planWrites decides field by field. For a contact that does not exist yet everything is written. For an
// existing one a field is skipped when the remote already holds the value, when it is first-touch and the
// remote is set, or when the remote differs from what leadgate last wrote (a human edit: a conflict).
//
// doubt (Contact.InDoubt) widens "what leadgate last wrote": a remote value equal to any value sent in
// a write whose answer was lost is leadgate's own, so it is overwritten, not kept as an edit.
func planWrites(wants []want, remote map[string]string, exists bool, prev map[string]string, doubt Doubt) plan {
	p := plan{writes: map[string]string{}, written: maps.Clone(prev)}
	if p.written == nil {
		p.written = map[string]string{}
	}
	for _, w := range wants {
		if !exists {
			p.writes[w.key] = w.value
			p.written[w.key] = w.value
			continue
		}
		cur := remote[w.key]
		switch {
		case sameValue(cur, w.value):
			if !w.firstTouch {
				p.written[w.key] = w.value // the remote holds our value: the baseline for edit detection
			}
		case w.firstTouch && strings.TrimSpace(cur) != "":
			// First-touch attribution already set remotely: never overwritten.
		case hasPrev(prev, w.key) && !sameValue(cur, prev[w.key]) && !doubt.Sent(w.key, cur):
			p.conflicts = append(p.conflicts, FieldConflict{Field: w.key, OurLast: prev[w.key], Remote: cur})
		default:
			p.writes[w.key] = w.value
			p.written[w.key] = w.value
		}
	}
	return p
}

// Doubt is, per remote field, every value leadgate sent in writes whose answer never came, oldest first.
// All of them are kept, not only the latest: of two successive failed writes the first may have reached
// the CRM and the second not, and the value left there is then the earlier one.
type Doubt map[string][]string

// doubtDepth bounds the values kept per field: failed writes of one contact in a row are few, and an
// older value than this many tries back is taken for an edit.
const doubtDepth = 8

// Sent reports whether cur is a value leadgate sent for key in a write whose outcome is unknown.
func (d Doubt) Sent(key, cur string) bool {
	return slices.ContainsFunc(d[key], func(v string) bool { return sameValue(cur, v) })
}

// With is d plus writes, each field's values kept once, newest last.
func (d Doubt) With(writes map[string]string) Doubt {
	if len(d) == 0 && len(writes) == 0 {
		return nil
	}
	out := make(Doubt, len(d)+len(writes))
	for k, vs := range d {
		out[k] = slices.Clone(vs)
	}
	for k, v := range writes {
		vs := slices.DeleteFunc(out[k], func(old string) bool { return old == v })
		vs = append(vs, v)
		if len(vs) > doubtDepth {
			vs = vs[len(vs)-doubtDepth:]
		}
		out[k] = vs
	}
	return out
}

// inDoubt is what the CRM may hold from leadgate if writes fail without a trustworthy answer: c.InDoubt
// with writes added (Result.InDoubt).
func inDoubt(c Contact, writes map[string]string) Doubt {
	return c.InDoubt.With(writes)
}

func hasPrev(prev map[string]string, key string) bool {
	_, ok := prev[key]
	return ok
}

// sameValue compares field values as the CRMs echo them: surrounding space and letter case of emails do
// not count, and phones compare by their digits (CRMs reformat them).
func sameValue(a, b string) bool {
	a, b = strings.TrimSpace(a), strings.TrimSpace(b)
	if a == b || strings.EqualFold(a, b) && strings.Contains(a, "@") {
		return true
	}
	return isPhoneLike(a) && isPhoneLike(b) && digits(a) == digits(b)
}

func isPhoneLike(s string) bool {
	if len(digits(s)) < 7 {
		return false
	}
	return strings.IndexFunc(s, func(r rune) bool {
		return !(r >= '0' && r <= '9' || strings.ContainsRune("+-(). ", r))
	}) < 0
}

func digits(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, s)
}

// sortedSet returns the distinct non-empty trimmed values, sorted.
func sortedSet(in []string) []string {
	set := map[string]bool{}
	for _, s := range in {
		if s = strings.TrimSpace(strings.ReplaceAll(s, tagSep, " ")); s != "" {
			set[s] = true
		}
	}
	return slices.Sorted(maps.Keys(set))
}

// tagSep joins tag names in Previous[PrevTags]; tag names may contain commas, never newlines.
const tagSep = "\n"

// tagChanges compares the desired tags with those leadgate last applied (Previous[PrevTags]).
func tagChanges(tags []string, prev map[string]string) (add, remove []string, joined string) {
	want := sortedSet(tags)
	var had []string
	if s := prev[PrevTags]; s != "" {
		had = strings.Split(s, tagSep)
	}
	for _, t := range want {
		if !slices.Contains(had, t) {
			add = append(add, t)
		}
	}
	for _, t := range had {
		if !slices.Contains(want, t) {
			remove = append(remove, t)
		}
	}
	return add, remove, strings.Join(want, tagSep)
}

// noteToAppend is the note to write, or "" when there is none or it was already appended.
func noteToAppend(c Contact) string {
	n := strings.TrimSpace(c.Note)
	if n == "" || n == c.Previous[PrevNote] {
		return ""
	}
	return n
}
