// Package principal carries the authenticated caller (an API token or a
// logged-in user) through a request's context.
package principal

import (
	"context"
	"fmt"
)

// Principal is who is acting. Role is admin, editor or viewer.
type Principal struct {
	Kind string // "token" | "user" | "system"
	ID   int64
	Name string // token name or user email
	Role string
}

// Actor is the name written into the audit history.
func (p Principal) Actor() string {
	if p.Kind == "" {
		return "system"
	}
	return fmt.Sprintf("%s:%s", p.Kind, p.Name)
}

type ctxKey struct{}

// With returns ctx carrying p.
func With(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, ctxKey{}, p)
}

// From returns the principal in ctx and whether there is one.
func From(ctx context.Context) (Principal, bool) {
	p, ok := ctx.Value(ctxKey{}).(Principal)
	return p, ok
}
