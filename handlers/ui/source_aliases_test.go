package ui_test

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/leadgate/leadgate/handlers/handlerstest"
	"github.com/leadgate/leadgate/models"
)

func TestSourceFormShowsHubSpotDefaultStageAliases(t *testing.T) {
	t.Parallel()
	e := handlerstest.NewEnv(t)
	c := e.SignedIn(models.RoleAdmin)

	res := c.Get("/w/default/sources/new")
	handlerstest.ExpectBody(t, "new source form", res, `data-testid="default-aliases-hubspot"`,
		"<code>salesqualifiedlead</code> → SQL", "<code>marketingqualifiedlead</code> → Engaged", "<code>customer</code> → Closed")

	res = c.Post("/w/default/sources", url.Values{"name": {"HubSpot"}, "kind": {"hubspot"}, "secret": {"hubspot-client-secret"}})
	handlerstest.ExpectStatus(t, "create hubspot source", res, http.StatusCreated)
	list, _ := e.Store.SourceList(context.Background(), e.WS.ID)
	if len(list) != 1 || list[0].Config.StageAliases != nil {
		t.Fatalf("stored %+v; a new HubSpot source keeps following the default aliases", list)
	}
	sp := "/w/default/sources/" + strconv.FormatInt(list[0].ID, 10)
	res = c.Get(sp)
	handlerstest.ExpectBody(t, "source page", res, `data-testid="source-aliases"`, "<code>opportunity</code> → SQL", "the provider",
		`name="alias_value" value="evangelist"`)

	res = c.Post(sp, url.Values{"name": {"HubSpot"}, "alias_value": {"lead", "customer"}, "alias_stage": {"Nowhere", "Closed"}})
	handlerstest.ExpectStatus(t, "alias to an unknown stage", res, http.StatusUnprocessableEntity)
	handlerstest.ExpectBody(t, "alias to an unknown stage", res, "which is not a stage")

	res = c.Post(sp, url.Values{"name": {"HubSpot"}, "alias_value": {"lead", "customer"}, "alias_stage": {"engaged", "Closed"}})
	handlerstest.ExpectStatus(t, "save aliases", res, http.StatusSeeOther)
	got, _ := e.Store.SourceGet(context.Background(), e.WS.ID, list[0].ID)
	if len(got.Config.StageAliases) != 2 || got.Config.StageAliases["lead"] != "Engaged" {
		t.Fatalf("saved aliases %v, want lead→Engaged (canonical) and customer→Closed", got.Config.StageAliases)
	}
}

func TestSourcePageShowsRefusedDeliveriesAndTheRefusalAlarm(t *testing.T) {
	t.Parallel()
	e := handlerstest.NewEnv(t)
	c := e.SignedIn(models.RoleViewer)
	ctx := context.Background()
	src := models.Source{WorkspaceID: e.WS.ID, Name: "Typeform", Kind: "typeform", Enabled: true}
	if err := e.Store.SourceCreate(ctx, &src); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Store.SourceDeliveriesAdd(ctx, []models.SourceDeliveryDelta{{SourceID: src.ID, WorkspaceID: e.WS.ID, Signature: 6, Malformed: 1, Outcomes: "sssssms"}}); err != nil {
		t.Fatal(err)
	}
	msg := "6 of the last 7 deliveries to source Typeform were refused: signature mismatch"
	if _, err := e.Store.SourceAlarmFire(ctx, e.WS.ID, src.ID, models.SourceAlarmSignatureRefused, msg, time.Now()); err != nil {
		t.Fatal(err)
	}
	res := c.Get("/w/default/sources/" + strconv.FormatInt(src.ID, 10))
	handlerstest.ExpectStatus(t, "source page", res, http.StatusOK)
	handlerstest.ExpectBody(t, "source page", res, `data-testid="source-alarm"`, msg, `data-testid="source-refused"`, "7", "6 signature, 1 malformed")
}

func TestSourcePageStatesItsLearnedSilenceRule(t *testing.T) {
	t.Parallel()
	e := handlerstest.NewEnv(t)
	c := e.SignedIn(models.RoleViewer)
	ctx := context.Background()
	src := models.Source{WorkspaceID: e.WS.ID, Name: "Typeform", Kind: "typeform", Enabled: true}
	if err := e.Store.SourceCreate(ctx, &src); err != nil {
		t.Fatal(err)
	}
	path := "/w/default/sources/" + strconv.FormatInt(src.ID, 10)
	handlerstest.ExpectBody(t, "no alarm", c.Get(path), `data-testid="source-silence"`, "it learns this source")
	a := models.SilenceAlarm{WorkspaceID: e.WS.ID, SourceID: &src.ID, Metric: models.SilenceApply, ThresholdSeconds: 5400, ReminderSeconds: 3600,
		BusinessHours: []byte(`{}`), Enabled: true}
	if err := e.Store.SilenceAlarmCreate(ctx, &a); err != nil {
		t.Fatal(err)
	}
	handlerstest.ExpectBody(t, "new learned alarm", c.Get(path), "Learning this source&#39;s rhythm: 0 days of history and 0 leads so far",
		"until then it alarms after 1h30m0s without a lead")
}
