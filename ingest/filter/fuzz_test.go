package filter_test

import (
	"context"
	"testing"

	"github.com/leadgate/leadgate/ingest/filter"
)

// FuzzCompile feeds arbitrary expressions to the compiler: it must answer a
// set or a RuleError, never panic, and a compiled set must evaluate without
// panicking either.
func FuzzCompile(f *testing.F) {
	for _, seed := range []string{
		`email endsWith "@acme.com"`, `fields.consent != true`, `payload?.data?.test == true`,
		`lower(first_name) in ["test"]`, `len(fields) > 3 && phone matches "^\\+1"`, `(`, `email ==`, `1 + `,
		`payload.a.b.c[0] == nil`, `all(fields.tags ?? [], {# != "x"})`, `now().Year() > 2000`, `"a" * 3`,
	} {
		f.Add(seed)
	}
	env := sampleEnv()
	f.Fuzz(func(t *testing.T, code string) {
		set, err := filter.Compile([]filter.Rule{{Name: "fuzz", Expr: code, Action: "drop"}})
		if err != nil {
			if _, ok := err.(*filter.RuleError); !ok {
				t.Fatalf("error %T %v is not a RuleError", err, err)
			}
			return
		}
		_ = filter.Evaluate(context.Background(), set, env)
	})
}
