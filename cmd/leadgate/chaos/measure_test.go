package chaos

import (
	"bytes"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// tinyScenario is two leads: lead 0 form → SQL, lead 1 form only.
func tinyScenario() *Scenario {
	return &Scenario{
		Leads: []Lead{
			{Index: 0, Email: "ann@example.com", Events: []int{0, 1}},
			{Index: 1, Email: "bob@example.com", Events: []int{2}},
		},
		Events: []Event{
			{Index: 0, Lead: 0, Channel: 0},
			{Index: 1, Lead: 0, Channel: 2},
			{Index: 2, Lead: 1, Channel: 0},
		},
	}
}

// ackAll acknowledges every event once, with event ids e0, e1, ...
func ackAll(sc *Scenario, except ...int) *Traffic {
	tr := &Traffic{Started: time.Now().Add(-time.Second)}
	for _, e := range sc.Events {
		d := delivery{event: e.Index}
		skip := false
		for _, x := range except {
			skip = skip || x == e.Index
		}
		if skip {
			d.attempts = []attempt{{status: 503}, {status: 503}, {status: 503}}
		} else {
			d.attempts = []attempt{{status: http.StatusOK, eventID: "e" + string(rune('0'+e.Index)), latency: time.Millisecond}}
			d.acked, d.ackedAt = true, time.Now()
		}
		tr.Deliveries = append(tr.Deliveries, d)
	}
	return tr
}

func TestMeasure(t *testing.T) {
	tests := []struct {
		name    string
		traffic func(*Scenario) *Traffic
		o       observed
		want    Column
	}{
		{
			name:    "AllThereAtTheirHighestStage",
			traffic: func(sc *Scenario) *Traffic { return ackAll(sc) },
			o: observed{contacts: []CRMContact{{ID: "1", Email: "ann@example.com", Stage: "SQL"}, {ID: "2", Email: "bob@example.com", Stage: "Discovered"}},
				writes: []StageWrite{{"1", "Discovered"}, {"1", "SQL"}, {"2", "Discovered"}}},
			want: Column{LeadsAcked: 2, LeadsAtHighest: 2, EventsAcked: 3, EventsFinal: 3},
		},
		{
			name:    "SurfaceFormsMakeADuplicateAndABackwardWrite",
			traffic: func(sc *Scenario) *Traffic { return ackAll(sc) },
			o: observed{contacts: []CRMContact{{ID: "1", Email: "ann@example.com", Stage: "Discovered"}, {ID: "2", Email: " ann@example.com ", Stage: "SQL"},
				{ID: "3", Email: "bob@example.com", Stage: "Discovered"}},
				writes: []StageWrite{{"1", "SQL"}, {"1", "Discovered"}, {"2", "SQL"}, {"3", "Discovered"}}},
			// Ann's best contact holds SQL, but contact 1 moved backwards: a regression all the same.
			want: Column{DuplicateContacts: 1, Regressions: 1, BackwardMoves: 1, LeadsAcked: 2, LeadsAtHighest: 2, EventsAcked: 3, EventsFinal: 3},
		},
		{
			name:    "AcknowledgedButMissingIsLost",
			traffic: func(sc *Scenario) *Traffic { return ackAll(sc) },
			o:       observed{contacts: []CRMContact{{ID: "1", Email: "ann@example.com", Stage: "Discovered"}, {ID: "9", Email: "stranger@example.com"}}},
			want:    Column{Regressions: 1, Lost: 1, Unmatched: 1, LeadsAcked: 2, EventsAcked: 3, EventsFinal: 3},
		},
		{
			name:    "NeverAcknowledgedIsNotLostButGivenUp",
			traffic: func(sc *Scenario) *Traffic { return ackAll(sc, 1, 2) },
			o:       observed{contacts: []CRMContact{{ID: "1", Email: "ann@example.com", Stage: "Discovered"}}},
			want:    Column{LeadsAcked: 1, LeadsAtHighest: 1, EventsAcked: 1, EventsFinal: 1, EventsGivenUp: 2},
		},
		{
			name:    "AcknowledgedWithoutAFinalOutcome",
			traffic: func(sc *Scenario) *Traffic { return ackAll(sc) },
			o: observed{contacts: []CRMContact{{ID: "1", Email: "ann@example.com", Stage: "SQL"}, {ID: "2", Email: "bob@example.com", Stage: "Discovered"}},
				final: func(id string) bool { return id != "e1" }},
			want: Column{LeadsAcked: 2, LeadsAtHighest: 2, EventsAcked: 3, EventsFinal: 2},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc := tinyScenario()
			tt.o.sc, tt.o.traffic = sc, tt.traffic(sc)
			var got Column
			measure(&got, tt.o)
			pick := func(c Column) [11]int {
				return [11]int{c.DuplicateContacts, c.Regressions, c.BackwardMoves, c.Lost, c.LeadsAcked, c.LeadsAtHighest,
					c.Unmatched, c.EventsAcked, c.EventsFinal, c.EventsGivenUp, 0}
			}
			if pick(got) != pick(tt.want) {
				t.Errorf("dup, regr, backward, lost, acked, highest, unmatched, evAcked, evFinal, givenUp:\n got %v\nwant %v", pick(got), pick(tt.want))
			}
		})
	}
}

func TestMeasureSplitsAcksByTheReceiverFaultTheyFellIn(t *testing.T) {
	sc := tinyScenario()
	base := time.Now()
	at := func(d time.Duration, status int, latency time.Duration) attempt {
		return attempt{status: status, began: base.Add(d), latency: latency}
	}
	tr := &Traffic{Base: base, Started: base, Deliveries: []delivery{
		{event: 0, attempts: []attempt{at(time.Second, http.StatusOK, 3*time.Millisecond)}}, // calm
		// In the Postgres window (10 s, took 2 s, plus a second): a slow ack, a timeout, then its retry.
		{event: 1, attempts: []attempt{at(10*time.Second, http.StatusOK, 40*time.Millisecond), at(11*time.Second, 0, 5*time.Second),
			at(12900*time.Millisecond, http.StatusOK, 2*time.Millisecond)}},
		// The storm only touches the CRM; after the Postgres window closed at 13 s.
		{event: 2, attempts: []attempt{at(20*time.Second, http.StatusOK, 4*time.Millisecond), at(13*time.Second, http.StatusOK, time.Millisecond)}},
	}}
	c := Column{Faults: []FaultRecord{
		{Fault: FaultCRMStorm, At: 19 * time.Second, Took: 5 * time.Second},
		{Fault: FaultPostgresRestart, At: 10 * time.Second, Took: 2 * time.Second},
		{Fault: FaultRedisRestart, Skip: "no Redis in this mode"},
	}}
	measure(&c, observed{sc: sc, traffic: tr})
	want := []FaultAcks{{Fault: FaultPostgresRestart, Attempts: 3, Answered200: 2, Unanswered: 1, P99: 40 * time.Millisecond, Max: 40 * time.Millisecond}}
	if !slices.Equal(c.InFaults, want) {
		t.Errorf("fault windows:\n got %+v\nwant %+v", c.InFaults, want)
	}
	if c.CalmP99 != 4*time.Millisecond || c.AckP99 != 40*time.Millisecond {
		t.Errorf("calm p99 %s (want 4ms), all p99 %s (want 40ms)", c.CalmP99, c.AckP99)
	}
	if got := fmtFaultAcks(&c); got != "postgres-restart: 2 of 3 / 1, 40.0ms / 40.0ms" {
		t.Errorf("report cell %q", got)
	}
}

func TestMeasureCountsCRMAnswers(t *testing.T) {
	sc := tinyScenario()
	var c Column
	measure(&c, observed{sc: sc, traffic: ackAll(sc), summary: &CRMSummary{Requests: 10, MaxIn1s: 6,
		ByStatus: map[string]int{"200": 5, "201": 1, "429": 2, "503": 1, "422": 1}}})
	if c.CRMRequests != 10 || c.CRMFailures != 4 || c.CRM429 != 2 || c.CRM5xx != 1 || c.MaxIn1s != 6 || !c.CRMKnown {
		t.Fatalf("CRM counts: %+v", c)
	}
}

func TestViolations(t *testing.T) {
	clean := Column{LeadsAcked: 5, LeadsAtHighest: 5, EventsAcked: 9, EventsFinal: 9, CRMKnown: true, MaxIn1s: 5, RateLimit: 5}
	if v := clean.Violations(); len(v) != 0 {
		t.Fatalf("a clean column has violations: %v", v)
	}
	bad := clean
	bad.DuplicateContacts, bad.Regressions, bad.Lost, bad.CRM429, bad.MaxIn1s, bad.EventsFinal = 1, 2, 3, 4, 6, 8
	want := []string{"1 duplicate contacts", "2 stage regressions", "3 lost leads", "1 acknowledged events without a final outcome",
		"4 CRM 429 answers", "6 CRM requests in one second"}
	got := strings.Join(bad.Violations(), "; ")
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("violations %q lack %q", got, w)
		}
	}
}

func TestReportWritesBothColumns(t *testing.T) {
	sc := tinyScenario()
	lg := &Column{Name: "leadgate", Target: "CRM", RateLimit: 5}
	measure(lg, observed{sc: sc, traffic: ackAll(sc), summary: &CRMSummary{Requests: 4, MaxIn1s: 2, ByStatus: map[string]int{"200": 4}},
		contacts: []CRMContact{{ID: "1", Email: "ann@example.com", Stage: "SQL"}, {ID: "2", Email: "bob@example.com", Stage: "Discovered"}}})
	base := &Column{Name: "baseline (direct to CRM)", Target: "CRM", RateLimit: 5}
	measure(base, observed{sc: sc, traffic: ackAll(sc), summary: &CRMSummary{Requests: 9, MaxIn1s: 9, ByStatus: map[string]int{"429": 9}}})
	rep := &Report{Config: Config{Seed: 1, CRMRPS: 5}, Scenario: describe(sc), Baseline: base, Leadgate: lg}
	for _, format := range []string{"markdown", "text"} {
		var b bytes.Buffer
		if err := rep.Write(&b, format); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		for _, want := range []string{"baseline (direct to CRM)", "leadgate", "duplicate contacts", "max CRM requests in any 1 s", "9 (5)", "leadgate held every promise"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s report lacks %q:\n%s", format, want, out)
			}
		}
	}
	if rep.Failed() {
		t.Error("a clean leadgate column fails the report")
	}
	lg.Lost = 1
	if !rep.Failed() {
		t.Error("a lost lead does not fail the report")
	}
}

func TestParseFaults(t *testing.T) {
	tests := []struct {
		in      string
		want    string
		wantErr bool
	}{
		{"", "", false},
		{"none", "", false},
		{"all", strings.Join(AllFaults, ","), false},
		{"sigkill, crm-503-storm,sigkill", "sigkill,crm-503-storm", false},
		{"sigkill,reboot", "", true},
	}
	for _, tt := range tests {
		got, err := ParseFaults(tt.in)
		if (err != nil) != tt.wantErr || strings.Join(got, ",") != tt.want {
			t.Errorf("ParseFaults(%q) = %v, %v; want %q (error %v)", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}
