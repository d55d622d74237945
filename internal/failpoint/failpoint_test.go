package failpoint

import (
	"io"
	"log/slog"
	"slices"
	"testing"
)

func TestParse(t *testing.T) {
	cases := []struct {
		spec    string
		want    []string
		wantErr bool
	}{
		{"", nil, false},
		{" sync.after_crm_accept , apply.before_commit,sync.after_crm_accept", []string{"sync.after_crm_accept", "apply.before_commit"}, false},
		{"sync.after_crm_accept,nope", nil, true},
	}
	for _, c := range cases {
		got, err := Parse(c.spec)
		if (err != nil) != c.wantErr {
			t.Errorf("Parse(%q) error = %v, want error %v", c.spec, err, c.wantErr)
			continue
		}
		if !c.wantErr && !slices.Equal(got, c.want) {
			t.Errorf("Parse(%q) = %v, want %v", c.spec, got, c.want)
		}
	}
}

// TestHitFiresOnceAcrossRestarts: the first hit of an armed point kills; a later process with the same
// configuration and directory (the restart) passes through; unarmed points never kill.
func TestHitFiresOnceAcrossRestarts(t *testing.T) {
	dir := t.TempDir()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	kills := 0
	arm := func() *Set {
		s, err := New([]string{ApplyBeforeCommit}, dir, log)
		if err != nil {
			t.Fatal(err)
		}
		s.kill = func() { kills++ }
		return s
	}
	first := arm()
	first.Hit(ApplyAfterCommit)
	if kills != 0 {
		t.Fatalf("an unarmed point killed")
	}
	first.Hit(ApplyBeforeCommit)
	if kills != 1 || !Fired(dir, ApplyBeforeCommit) {
		t.Fatalf("armed point: kills = %d, fired = %v; want 1, true", kills, Fired(dir, ApplyBeforeCommit))
	}
	arm().Hit(ApplyBeforeCommit) // the restarted process
	if kills != 1 {
		t.Fatalf("the point fired again after the restart: kills = %d", kills)
	}
	var none *Set
	none.Hit(ApplyBeforeCommit) // no failpoints configured: a no-op
	if s, err := New(nil, "", log); s != nil || err != nil {
		t.Fatalf("New(nil) = %v, %v; want nil, nil", s, err)
	}
	if _, err := New([]string{ApplyBeforeCommit}, "", log); err == nil {
		t.Fatal("New without a directory: no error")
	}
}
