package actions_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/leadgate/leadgate/actions"
	"github.com/leadgate/leadgate/models"
	"github.com/leadgate/leadgate/models/modelstest"
)

func TestEraseContact(t *testing.T) {
	ctx := context.Background()
	st := modelstest.Store(t)
	email := "erase.me@example.com"
	now := time.Now().UTC()
	c := models.Contact{ID: uuid.NewString(), WorkspaceID: 1, Email: &email, Stage: "Discovered", Fields: map[string]string{},
		FirstTouch: map[string]string{}, Tags: []string{}, ScoreBreakdown: json.RawMessage(`[]`), FirstSeenAt: now, LastActivityAt: now}
	if err := st.ContactCreate(ctx, &c); err != nil {
		t.Fatal(err)
	}
	var hooked []string
	a := actions.Contacts{Store: st, EraseHooks: []func(context.Context, *models.Store, models.Contact) error{
		func(_ context.Context, _ *models.Store, c models.Contact) error {
			hooked = append(hooked, c.ID)
			return nil
		},
	}}

	for _, id := range []string{"not-a-uuid", uuid.NewString()} {
		_, err := a.Erase(ctx, 1, "tester", actions.EraseContact{ContactID: id})
		var missing *actions.NotFoundError
		if !errors.As(err, &missing) || missing.Field != "id" || missing.Message != "unknown contact" {
			t.Fatalf("erase %q: %v, want unknown contact on id", id, err)
		}
	}
	if _, err := a.Erase(ctx, 2, "tester", actions.EraseContact{ContactID: c.ID}); !errors.Is(err, actions.ErrNotFound) {
		t.Fatalf("erase from another workspace: %v, want not found", err)
	}

	out, err := a.Erase(ctx, 1, "tester", actions.EraseContact{ContactID: c.ID})
	if err != nil {
		t.Fatal(err)
	}
	if out != (actions.ErasedContact{ContactID: c.ID}) {
		t.Errorf("erase: %+v", out)
	}
	if len(hooked) != 1 || hooked[0] != c.ID {
		t.Errorf("erase hooks ran for %v, want once for %s", hooked, c.ID)
	}
	got, err := st.ContactGet(ctx, 1, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.ErasedAt == nil || got.Email != nil {
		t.Errorf("after the erase: erased_at %v, email %v", got.ErasedAt, got.Email)
	}

	// Again: nothing is done, hooked or audited twice.
	out, err = a.Erase(ctx, 1, "tester", actions.EraseContact{ContactID: c.ID, CRMDelete: true})
	if err != nil {
		t.Fatal(err)
	}
	if !out.AlreadyErased || out.CRMDelete {
		t.Errorf("second erase: %+v, want already erased", out)
	}
	if len(hooked) != 1 {
		t.Errorf("erase hooks ran %d times, want 1", len(hooked))
	}
	if n := audits(t, st, "contact.erase", c.ID); n != 1 {
		t.Errorf("contact.erase audit entries: %d, want 1", n)
	}
}
