package models

import (
	"database/sql/driver"
	"fmt"
	"strings"
)

// UUIDs is a Postgres uuid[] column. Its elements are uuids, which need no
// quoting in the array's text form.
type UUIDs []string

// Scan reads the array's text form, {a,b,...}.
func (u *UUIDs) Scan(src any) error {
	var s string
	switch v := src.(type) {
	case nil:
		*u = nil
		return nil
	case string:
		s = v
	case []byte:
		s = string(v)
	default:
		return fmt.Errorf("models: uuid array from %T", src)
	}
	s = strings.TrimSuffix(strings.TrimPrefix(s, "{"), "}")
	if s == "" {
		*u = UUIDs{}
		return nil
	}
	*u = strings.Split(s, ",")
	return nil
}

// Value writes the array's text form.
func (u UUIDs) Value() (driver.Value, error) {
	return "{" + strings.Join(u, ",") + "}", nil
}
