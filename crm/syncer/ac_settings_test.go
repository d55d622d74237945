package syncer_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/leadgate/leadgate/crm/crmfake"
	"github.com/leadgate/leadgate/models"
)

// The ActiveCampaign destination settings reach the adapter: with allow_null_email a phone-only lead is
// created as a phone-only contact (the fake refuses one without the request's allowNullEmail).
func TestRelayCarriesActiveCampaignPhoneOnlySetting(t *testing.T) {
	t.Parallel()
	e := newSyncEnv(t)
	fake := crmfake.NewActiveCampaign(crmfake.ACOptions{Options: crmfake.Options{Token: "ac-token"}, Fields: acFields, AllowNullEmail: true})
	defer fake.Close()
	d := e.addDestination(models.Destination{Kind: "activecampaign", BaseURL: fake.URL, RateLimitRPS: 50,
		Config: models.DestinationConfig{StageField: "3", AllowNullEmail: true, Automations: "never"}}, "ac-token")
	phone := "+14155550134"
	now := time.Now().UTC()
	c := models.Contact{ID: uuid.NewString(), WorkspaceID: e.ws.ID, Phone: &phone, Stage: "Discovered", Fields: map[string]string{},
		FirstTouch: map[string]string{}, Tags: []string{}, ScoreBreakdown: json.RawMessage("[]"), FirstSeenAt: now, LastActivityAt: now, Version: 1}
	if err := e.store.ContactCreate(e.ctx, &c); err != nil {
		t.Fatal(err)
	}
	e.intent(c)

	e.drainAll(d, 10*time.Second)

	cs := fake.Contacts()
	if len(cs) != 1 || cs[0].Phone != phone || cs[0].Email != "" || cs[0].Fields["3"] != "Discovered" {
		t.Fatalf("fake holds %+v, want one phone-only contact at Discovered", cs)
	}
}
