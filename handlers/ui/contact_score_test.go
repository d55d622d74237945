package ui_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/leadgate/leadgate/handlers/handlerstest"
	"github.com/leadgate/leadgate/models"
)

// The contact page shows the score as the sum of the lines the apply step
// scored, not a bare number.
func TestUIContactScoreShowsItsBreakdown(t *testing.T) {
	t.Parallel()
	e := handlerstest.NewEnv(t)
	src := e.SeedSource("Web form")
	e.Apply(src, handlerstest.Lead{Email: "ann@example.com", Stage: "Discovered"})
	ctx := context.Background()
	if err := e.Store.DB().WithContext(ctx).Exec(`UPDATE contacts SET score = 12,
		score_breakdown = '[{"kind":"event","key":"form_submitted","points":5},{"kind":"field","key":"employees gte 50","points":7}]'
		WHERE email = 'ann@example.com'`).Error; err != nil {
		t.Fatal(err)
	}
	ann, err := e.Store.ContactFindByEmail(ctx, e.WS.ID, "ann@example.com")
	if err != nil {
		t.Fatal(err)
	}
	c := e.SignedIn(models.RoleViewer)
	page := c.Get("/w/default/contacts/" + ann.ID)
	handlerstest.ExpectStatus(t, "contact", page, http.StatusOK)
	handlerstest.ExpectBody(t, "contact", page, "12 = form_submitted +5, employees gte 50 +7")
}
