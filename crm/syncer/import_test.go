package syncer_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/leadgate/leadgate/crm/crmfake"
	"github.com/leadgate/leadgate/crm/syncer"
	"github.com/leadgate/leadgate/lifecycle/apply"
	"github.com/leadgate/leadgate/models"
)

// event stores an event as ingest would and applies it.
func (e *syncEnv) applyEvent(src models.Source, email, target string, at time.Time) models.Event {
	e.t.Helper()
	id := uuid.Must(uuid.NewV7()).String()
	ev := models.Event{ID: id, WorkspaceID: src.WorkspaceID, SourceID: src.ID, EventType: "form_submitted", Channel: src.Channel,
		OccurredAt: at.UTC(), ReceivedAt: time.Now().UTC(), Fields: json.RawMessage(`{}`), Attribution: json.RawMessage(`{}`),
		Payload: json.RawMessage(`{}`), Status: models.EventPending, ContentType: "application/json", Email: &email, TargetStage: &target}
	if _, err := e.store.IngestStore(e.ctx, []models.IngestItem{{Event: ev, Key: "k-" + id}}, time.Hour); err != nil {
		e.t.Fatal(err)
	}
	applier := &apply.Applier{Store: e.store, Queue: noQueue{}, Log: e.relay.Log}
	if err := applier.Apply(e.ctx, id); err != nil {
		e.t.Fatalf("apply: %v", err)
	}
	got, err := e.store.EventByID(e.ctx, id)
	if err != nil {
		e.t.Fatal(err)
	}
	return got
}

type noQueue struct{}

func (noQueue) EnqueueApplyIn(context.Context, string, time.Duration) error { return nil }

// Contacts a CRM already holds at various stages are imported at those stages (one already known to
// leadgate is linked, not duplicated); afterwards an event can never move them backwards, in leadgate or
// in the CRM.
func TestImportKeepsCRMStagesAndEventsNeverMoveThemBack(t *testing.T) {
	t.Parallel()
	e := newSyncEnv(t)
	fake := crmfake.NewActiveCampaign(crmfake.ACOptions{Options: crmfake.Options{Token: "ac-token"}, Fields: acFields})
	defer fake.Close()
	d := e.acDestination(fake, 50)
	fake.AddContact(crmfake.ACContact{Email: "sql@example.com", FirstName: "Sam", Fields: map[string]string{"3": "SQL"}})
	fake.AddContact(crmfake.ACContact{Email: "engaged@example.com", Fields: map[string]string{"3": "engaged"}})
	fake.AddContact(crmfake.ACContact{Email: "nostage@example.com"})
	fake.AddContact(crmfake.ACContact{Email: "Known@Example.com", Fields: map[string]string{"3": "Engaged"}})
	// Known to leadgate at Discovered, its intent not yet delivered: the import must not let it push the CRM back.
	known := e.contact("known@example.com", "Discovered")
	before := len(fake.Contacts())

	im, err := e.store.SyncImportStart(e.ctx, d.ID, "tester")
	if err != nil {
		t.Fatal(err)
	}
	importer := &syncer.Importer{Store: e.store, Connector: e.conn, Log: e.relay.Log}
	run, err := importer.Run(e.ctx, d.ID, im.ID, "tester")
	if err != nil {
		t.Fatal(err)
	}
	if run.Status != "done" || run.Seen != 4 || run.Created != 3 || run.Linked != 1 {
		t.Fatalf("import run %+v; want done, seen 4, created 3, linked 1", run)
	}
	stages := map[string]string{"sql@example.com": "SQL", "engaged@example.com": "Engaged", "nostage@example.com": ""}
	for email, want := range stages {
		c, err := e.store.ContactFindByEmail(e.ctx, e.ws.ID, email)
		if err != nil || c.Stage != want {
			t.Errorf("%s imported at %q (%v), want %q", email, c.Stage, err, want)
		}
		if st, err := e.store.SyncStateGet(e.ctx, d.ID, c.ID); err != nil || st.RemoteID == "" {
			t.Errorf("%s not linked to its CRM record: %+v %v", email, st, err)
		}
	}
	if n := e.count(`SELECT count(*) FROM outbox WHERE workspace_id = ? AND kind = 'crm_upsert' AND contact_id <> ?`, e.ws.ID, known.ID); n != 0 {
		t.Errorf("the import wrote %d crm_upsert intents for created contacts; the CRM already holds that state", n)
	}
	if k, _ := e.store.ContactGet(e.ctx, e.ws.ID, known.ID); k.Stage != "Engaged" || k.Version != 2 {
		t.Errorf("linked contact at %q v%d, want moved forward to the CRM's Engaged as v2", k.Stage, k.Version)
	}

	// An event proposing Discovered for the SQL contact: leadgate keeps SQL and the CRM is not pushed back.
	src := models.Source{WorkspaceID: e.ws.ID, Name: "Web form", Kind: "standard-webhooks", Channel: "web_form", Enabled: true}
	if err := e.store.SourceCreate(e.ctx, &src); err != nil {
		t.Fatal(err)
	}
	ev := e.applyEvent(src, "sql@example.com", "Discovered", time.Now())
	c, _ := e.store.ContactFindByEmail(e.ctx, e.ws.ID, "sql@example.com")
	if c.Stage != "SQL" {
		t.Errorf("after a Discovered event the contact is at %q (event %s: %s), want SQL", c.Stage, ev.Status, ev.Reason)
	}
	e.drainAll(d, 10*time.Second)
	got, _ := fake.Contact("sql@example.com")
	if got.Fields["3"] != "SQL" {
		t.Errorf("CRM stage = %q after the event, want SQL", got.Fields["3"])
	}
	if got, _ := fake.Contact("known@example.com"); got.Fields["3"] != "Engaged" {
		t.Errorf("known contact's CRM stage = %q, want Engaged (not pushed back to Discovered)", got.Fields["3"])
	}
	if len(fake.Contacts()) != before || fake.DuplicateEmails() != 0 {
		t.Errorf("CRM contacts %d (was %d), duplicates %d", len(fake.Contacts()), before, fake.DuplicateEmails())
	}
}

// ghlImportFake is a GoHighLevel location with the loop-breaker fields, a stage field and a pipeline.
func ghlImportFake() *crmfake.GoHighLevel {
	return crmfake.NewGoHighLevel(crmfake.GHLOptions{Options: crmfake.Options{Token: "ghl-token"}, LocationID: "loc-9",
		Fields: []crmfake.GHLField{
			{ID: "cfLoop", Name: "last_automation_source", FieldKey: "contact.last_automation_source"},
			{ID: "cfSync", Name: "sync_timestamp", FieldKey: "contact.sync_timestamp"},
			{ID: "cfStage", Name: "Lifecycle stage", FieldKey: "contact.lifecycle_stage"},
		},
		Pipelines: []crmfake.GHLPipeline{{ID: "pipe-1", Name: "Leads", Stages: []string{"st-disc", "st-eng", "st-sql"}}}})
}

// runImport imports destination d and checks the run's counts.
func (e *syncEnv) runImport(d models.Destination, seen, created, linked int) {
	e.t.Helper()
	im, err := e.store.SyncImportStart(e.ctx, d.ID, "tester")
	if err != nil {
		e.t.Fatal(err)
	}
	run, err := (&syncer.Importer{Store: e.store, Connector: e.conn, Log: e.relay.Log}).Run(e.ctx, d.ID, im.ID, "tester")
	if err != nil {
		e.t.Fatal(err)
	}
	if run.Status != "done" || run.Seen != seen || run.Created != created || run.Linked != linked {
		e.t.Fatalf("import run %+v; want done, seen %d, created %d, linked %d", run, seen, created, linked)
	}
}

// GoHighLevel in field mode: the location's contacts are listed page by page (more than one page of 100)
// with their stage custom field, configured by its fieldKey; a contact the CRM has at SQL is created at SQL
// and a Discovered event moves it back neither in leadgate nor in the CRM; a contact leadgate knows at
// Discovered is linked and moved forward to the CRM's stage, never pushing the CRM back.
func TestImportFromGoHighLevelFieldModeKeepsStages(t *testing.T) {
	t.Parallel()
	e := newSyncEnv(t)
	fake := ghlImportFake()
	defer fake.Close()
	d := e.addDestination(models.Destination{Kind: "gohighlevel", BaseURL: fake.URL, RateLimitRPS: 100,
		Config: models.DestinationConfig{LocationID: "loc-9", StageField: "contact.lifecycle_stage"}}, "ghl-token")
	stages := []string{"SQL", "engaged", "", "Closed-ish"} // the last names no leadgate stage: imported without one
	want := map[string]string{}
	for i := range 130 {
		email := fmt.Sprintf("ghl%03d@example.com", i)
		remote := stages[i%len(stages)]
		fake.AddContact(crmfake.GHLContact{Email: email, FirstName: "G", CustomFields: map[string]string{"cfStage": remote}})
		want[email] = map[string]string{"SQL": "SQL", "engaged": "Engaged"}[remote]
	}
	fake.AddContact(crmfake.GHLContact{Email: "known@example.com", CustomFields: map[string]string{"cfStage": "SQL"}})
	known := e.contact("known@example.com", "Discovered")
	before := len(fake.Contacts())

	e.runImport(d, 131, 130, 1)

	for email, stage := range want {
		c, err := e.store.ContactFindByEmail(e.ctx, e.ws.ID, email)
		if err != nil || c.Stage != stage {
			t.Fatalf("%s imported at %q (%v), want %q", email, c.Stage, err, stage)
		}
		if st, err := e.store.SyncStateGet(e.ctx, d.ID, c.ID); err != nil || st.RemoteID == "" {
			t.Errorf("%s not linked to its GHL record: %+v %v", email, st, err)
		}
	}
	if k, _ := e.store.ContactGet(e.ctx, e.ws.ID, known.ID); k.Stage != "SQL" {
		t.Errorf("linked contact at %q, want moved forward to the CRM's SQL", k.Stage)
	}
	searches := 0
	for _, r := range fake.Requests() {
		if r.Path == "/contacts/search" {
			searches++
		}
	}
	if searches != 2 {
		t.Errorf("contact searches = %d, want 2 pages for 131 contacts", searches)
	}

	src := models.Source{WorkspaceID: e.ws.ID, Name: "Web form", Kind: "standard-webhooks", Channel: "web_form", Enabled: true}
	if err := e.store.SourceCreate(e.ctx, &src); err != nil {
		t.Fatal(err)
	}
	e.applyEvent(src, "ghl000@example.com", "Discovered", time.Now())
	if c, _ := e.store.ContactFindByEmail(e.ctx, e.ws.ID, "ghl000@example.com"); c.Stage != "SQL" {
		t.Errorf("after a Discovered event the contact is at %q, want SQL", c.Stage)
	}
	e.drainAll(d, 30*time.Second)
	for _, email := range []string{"ghl000@example.com", "known@example.com"} {
		if got, _ := fake.Contact(email); got.CustomFields["cfStage"] != "SQL" {
			t.Errorf("%s: CRM stage %q, want SQL (never pushed back)", email, got.CustomFields["cfStage"])
		}
	}
	if len(fake.Contacts()) != before || fake.DuplicateEmails() != 0 {
		t.Errorf("CRM contacts %d (was %d), duplicates %d", len(fake.Contacts()), before, fake.DuplicateEmails())
	}
}

// GoHighLevel in deal mode: a contact's stage is its opportunity's stage in the pipeline (read through the
// stage map); after the import an event never moves the opportunity back and no second one is opened.
func TestImportFromGoHighLevelDealModeReadsOpportunityStage(t *testing.T) {
	t.Parallel()
	e := newSyncEnv(t)
	fake := ghlImportFake()
	defer fake.Close()
	d := e.addDestination(models.Destination{Kind: "gohighlevel", BaseURL: fake.URL, RateLimitRPS: 100,
		Config: models.DestinationConfig{LocationID: "loc-9", StageMode: "deal", Pipeline: "pipe-1",
			StageMap: map[string]string{"Discovered": "st-disc", "Engaged": "st-eng", "SQL": "st-sql"}}}, "ghl-token")
	sql := fake.AddContact(crmfake.GHLContact{Email: "sql@example.com"})
	sqlOpp := fake.AddOpportunity(crmfake.GHLOpportunity{Name: "SQL lead", ContactID: sql, PipelineID: "pipe-1", PipelineStageID: "st-sql"})
	eng := fake.AddContact(crmfake.GHLContact{Email: "eng@example.com"})
	fake.AddOpportunity(crmfake.GHLOpportunity{Name: "Engaged lead", ContactID: eng, PipelineID: "pipe-1", PipelineStageID: "st-eng"})
	fake.AddOpportunity(crmfake.GHLOpportunity{Name: "Other pipeline", ContactID: eng, PipelineID: "pipe-2", PipelineStageID: "x"})
	fake.AddContact(crmfake.GHLContact{Email: "none@example.com"})

	e.runImport(d, 3, 3, 0)

	for email, want := range map[string]string{"sql@example.com": "SQL", "eng@example.com": "Engaged", "none@example.com": ""} {
		if c, err := e.store.ContactFindByEmail(e.ctx, e.ws.ID, email); err != nil || c.Stage != want {
			t.Errorf("%s imported at %q (%v), want %q", email, c.Stage, err, want)
		}
	}
	src := models.Source{WorkspaceID: e.ws.ID, Name: "Web form", Kind: "standard-webhooks", Channel: "web_form", Enabled: true}
	if err := e.store.SourceCreate(e.ctx, &src); err != nil {
		t.Fatal(err)
	}
	e.applyEvent(src, "sql@example.com", "Discovered", time.Now())
	e.drainAll(d, 30*time.Second)
	var opps []crmfake.GHLOpportunity
	for _, o := range fake.Opportunities() {
		if o.ContactID == sql {
			opps = append(opps, o)
		}
	}
	if len(opps) != 1 || opps[0].ID != sqlOpp || opps[0].PipelineStageID != "st-sql" {
		t.Errorf("SQL contact's opportunities after a Discovered event: %+v; want its one opportunity still at st-sql", opps)
	}
}
