package mapping

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/tidwall/gjson"
)

// Override keys for the item's own fields; custom ones are "fields.<name>" and "attribution.<name>".
const (
	KeyEventType    = "event_type"
	KeyOccurredAt   = "occurred_at"
	KeyEmail        = "email"
	KeyPhone        = "phone"
	KeyFirstName    = "first_name"
	KeyLastName     = "last_name"
	KeyCompany      = "company"
	KeyTargetStage  = "target_stage"
	KeyCurrentStage = "current_stage"
	KeyDeliveryID   = "delivery_id"

	prefixFields      = "fields."
	prefixAttribution = "attribution."
)

// Limits that keep a source's configuration reviewable and cheap to evaluate on every delivery.
const (
	maxOverrides    = 64
	maxPathLen      = 512
	maxCustomKeyLen = 64
)

// Overrides are per-source JSON paths (tidwall/gjson syntax, evaluated against each item's Raw) that
// replace the preset for a field. Keys: event_type, occurred_at, email, phone, first_name, last_name,
// company, target_stage, current_stage, delivery_id, and "fields.<name>" / "attribution.<name>" to add
// custom ones. An override is authoritative: when its path finds nothing the field is emptied (custom
// fields are then left out). The constant event type and the channel are source settings, not here.
type Overrides struct {
	Paths map[string]string `json:"paths,omitempty"`
}

// Validate reports the first problem with the overrides: an unknown key, a blank or overlong path, an
// empty custom name, or too many entries. The zero Overrides is valid.
func (o Overrides) Validate() error {
	if len(o.Paths) > maxOverrides {
		return fmt.Errorf("mapping: %d overrides, at most %d allowed", len(o.Paths), maxOverrides)
	}
	for _, key := range o.sortedKeys() {
		path := o.Paths[key]
		if err := validateOverrideKey(key); err != nil {
			return err
		}
		switch {
		case strings.TrimSpace(path) == "":
			return fmt.Errorf("mapping: override %q: empty path", key)
		case len(path) > maxPathLen:
			return fmt.Errorf("mapping: override %q: path longer than %d bytes", key, maxPathLen)
		case !utf8.ValidString(path) || strings.IndexFunc(path, unicode.IsControl) >= 0:
			return fmt.Errorf("mapping: override %q: path has invalid characters", key)
		}
	}
	return nil
}

func validateOverrideKey(key string) error {
	switch key {
	case KeyEventType, KeyOccurredAt, KeyEmail, KeyPhone, KeyFirstName, KeyLastName, KeyCompany,
		KeyTargetStage, KeyCurrentStage, KeyDeliveryID:
		return nil
	}
	name, custom := customName(key)
	if !custom {
		return fmt.Errorf("mapping: unknown override key %q", key)
	}
	switch {
	case name == "":
		return fmt.Errorf("mapping: override %q: empty custom field name", key)
	case len(name) > maxCustomKeyLen:
		return fmt.Errorf("mapping: override %q: custom field name longer than %d bytes", key, maxCustomKeyLen)
	case !utf8.ValidString(name) || strings.IndexFunc(name, unicode.IsControl) >= 0:
		return errors.New("mapping: override key has invalid characters")
	}
	return nil
}

func customName(key string) (string, bool) {
	if name, ok := strings.CutPrefix(key, prefixFields); ok {
		return name, true
	}
	return strings.CutPrefix(key, prefixAttribution)
}

func (o Overrides) sortedKeys() []string {
	keys := make([]string, 0, len(o.Paths))
	for k := range o.Paths {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// apply evaluates every override against the item's Raw. It assumes Validate passed.
func (o Overrides) apply(it *Item) {
	if len(o.Paths) == 0 {
		return
	}
	doc := gjson.ParseBytes(it.Raw)
	for _, key := range o.sortedKeys() {
		r := doc.Get(o.Paths[key])
		switch key {
		case KeyEventType:
			it.EventType = text(r)
		case KeyOccurredAt:
			it.OccurredAt = parseTime(r)
		case KeyEmail:
			it.Email = text(r)
		case KeyPhone:
			it.Phone = text(r)
		case KeyFirstName:
			it.FirstName = text(r)
		case KeyLastName:
			it.LastName = text(r)
		case KeyCompany:
			it.Company = text(r)
		case KeyTargetStage:
			it.TargetStage = text(r)
		case KeyCurrentStage:
			it.CurrentStage = text(r)
		case KeyDeliveryID:
			it.DeliveryID = text(r)
		default:
			applyCustom(it, key, r)
		}
	}
}

func applyCustom(it *Item, key string, r gjson.Result) {
	target, name := it.Fields, strings.TrimPrefix(key, prefixFields)
	if rest, ok := strings.CutPrefix(key, prefixAttribution); ok {
		target, name = it.Attribution, rest
	}
	delete(target, name)
	putValue(target, name, r)
}
