package main

import (
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/leadgate/leadgate/cmd/leadgate/chaos"
)

func TestParseChaosDefaultsAreTheDocumentedFullRun(t *testing.T) {
	cfg, format, err := parseChaos(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Leads != 10000 || cfg.Mode != chaos.ModeBoth || cfg.CRMRPS != 5 || cfg.Storm != time.Minute ||
		!slices.Equal(cfg.Faults, chaos.AllFaults) || format != "markdown" {
		t.Fatalf("defaults = %+v, format %q", cfg, format)
	}
}

func TestParseChaos(t *testing.T) {
	tests := []struct {
		args    string
		check   func(chaos.Config) bool
		wantErr string
	}{
		{"--leads 300 --mode leadgate --faults sigkill,crm-503-storm --crm-rps 20 --storm 5s --report text",
			func(c chaos.Config) bool {
				return c.Leads == 300 && c.Mode == "leadgate" && slices.Equal(c.Faults, []string{"sigkill", "crm-503-storm"}) && c.CRMRPS == 20 && c.Storm == 5*time.Second
			}, ""},
		{"--faults none", func(c chaos.Config) bool { return len(c.Faults) == 0 }, ""},
		{"--faults reboot", nil, "unknown fault"},
		{"--report html", nil, "markdown or text"},
		{"--leads 300 extra", nil, "unexpected argument"},
	}
	for _, tt := range tests {
		cfg, _, err := parseChaos(strings.Fields(tt.args), io.Discard)
		switch {
		case tt.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("parseChaos(%q) error = %v, want %q", tt.args, err, tt.wantErr)
			}
		case err != nil:
			t.Errorf("parseChaos(%q): %v", tt.args, err)
		case !tt.check(cfg):
			t.Errorf("parseChaos(%q) = %+v", tt.args, cfg)
		}
	}
}
