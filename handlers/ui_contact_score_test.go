package handlers_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/leadgate/leadgate/models"
)

// The contact page shows the score as the sum of the lines the apply step
// scored, not a bare number.
func TestUIContactScoreShowsItsBreakdown(t *testing.T) {
	t.Parallel()
	e := newUIEnv(t)
	src := e.seedSource("Web form")
	e.apply(src, lead{email: "ann@example.com", stage: "Discovered"})
	ctx := context.Background()
	if err := e.store.DB().WithContext(ctx).Exec(`UPDATE contacts SET score = 12,
		score_breakdown = '[{"kind":"event","key":"form_submitted","points":5},{"kind":"field","key":"employees gte 50","points":7}]'
		WHERE email = 'ann@example.com'`).Error; err != nil {
		t.Fatal(err)
	}
	ann, err := e.store.ContactFindByEmail(ctx, e.ws.ID, "ann@example.com")
	if err != nil {
		t.Fatal(err)
	}
	c := e.signedIn(models.RoleViewer)
	page := c.get("/w/default/contacts/" + ann.ID)
	expectStatus(t, "contact", page, http.StatusOK)
	expectBody(t, "contact", page, "12 = form_submitted +5, employees gte 50 +7")
}
