package chaos

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
)

// inProcessFake runs the fake CRM in the test process, with a client for its control API.
func inProcessFake(t *testing.T, rps int) *fakeCRMProc {
	t.Helper()
	f, err := NewFakeCRM(FakeCRMOptions{RPS: rps, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	return &fakeCRMProc{FakeCRMInfo: f.Info(), http: &http.Client{Timeout: 10 * time.Second}}
}

func postHook(t *testing.T, url, body string) int {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func TestBaselineWritesRawFormsStraightToTheCRM(t *testing.T) {
	ctx := context.Background()
	crm := inProcessFake(t, 0)
	b, err := newBaseline(crm.FakeCRMInfo)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.stop)
	for _, body := range []string{
		`{"event_type":"call_qualified","email":"Ann@Example.com","phone":"(415) 234-5678"}`,
		`{"event_type":"form_submitted","email":"ann@example.com","phone":"+1 415 234 5678"}`, // same contact (case-insensitive), stage overwritten
		`{"event_type":"email_replied","email":" ann@example.com ","phone":"415.234.5678"}`,   // spaces: a second contact
	} {
		if code := postHook(t, b.url(), body); code != http.StatusOK {
			t.Fatalf("baseline answered %d to %s", code, body)
		}
	}
	st, err := crm.state(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Contacts) != 2 {
		t.Fatalf("contacts = %+v, want 2 (the padded email is another contact)", st.Contacts)
	}
	if st.Contacts[0].Stage != "Discovered" {
		t.Errorf("first contact's stage = %q, want the later form's Discovered written over SQL", st.Contacts[0].Stage)
	}
	if len(st.Writes) != 3 || st.Writes[0].Stage != "SQL" || st.Writes[1].Stage != "Discovered" {
		t.Errorf("stage writes = %+v", st.Writes)
	}
}

func TestBaselineAnswers502WhenTheCRMRefuses(t *testing.T) {
	ctx := context.Background()
	crm := inProcessFake(t, 1)
	b, err := newBaseline(crm.FakeCRMInfo)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.stop)
	// One request per second: the search passes, the create is rate limited.
	if code := postHook(t, b.url(), `{"event_type":"form_submitted","email":"ann@example.com"}`); code != http.StatusBadGateway {
		t.Fatalf("baseline answered %d, want 502 after a 429", code)
	}
	st, err := crm.state(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Summary.ByStatus["429"] != 1 || len(st.Contacts) != 0 {
		t.Fatalf("summary %+v, contacts %+v", st.Summary, st.Contacts)
	}
}

func TestFakeCRMStormAndSummary(t *testing.T) {
	ctx := context.Background()
	crm := inProcessFake(t, 0)
	get := func() int {
		req, _ := http.NewRequest(http.MethodGet, crm.URL+"/api/3/contacts", nil)
		req.Header.Set("Api-Token", crm.Token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := get(); code != http.StatusOK {
		t.Fatalf("before the storm: %d", code)
	}
	if err := crm.setFailRate(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if code := get(); code != http.StatusServiceUnavailable {
		t.Fatalf("during the storm: %d, want 503", code)
	}
	if err := crm.setFailRate(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if code := get(); code != http.StatusOK {
		t.Fatalf("after the storm: %d", code)
	}
	if err := crm.setFailRate(ctx, 2); err == nil {
		t.Error("a fail rate of 2 was accepted")
	}
	st, err := crm.state(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Summary.Requests != 3 || st.Summary.ByStatus["503"] != 1 || st.Summary.MaxIn1s < 1 {
		t.Fatalf("summary = %+v", st.Summary)
	}
}
