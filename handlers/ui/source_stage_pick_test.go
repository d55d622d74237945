package ui_test

import (
	"strings"
	"testing"

	"github.com/leadgate/leadgate/handlers/handlerstest"
	"github.com/leadgate/leadgate/models"
)

// Where a source's mapping chooses a stage, the operator picks from the
// stages in force instead of typing a name; a row added with htmx is the same.
func TestSourceMappingPicksStagesFromAList(t *testing.T) {
	t.Parallel()
	e := handlerstest.NewEnv(t)
	c := e.SignedIn(models.RoleEditor)
	row := c.Get("/w/default/sources/stage-row", "HX-Request", "true")
	handlerstest.ExpectBody(t, "added row", row, `<select name="stage_name" aria-label="Stage"><option value="">No stage</option> <option value="Discovered">Discovered</option> <option value="Engaged">Engaged</option> <option value="SQL">SQL</option> <option value="Closed">Closed</option> <option value="Lost">Lost</option> </select>`)
	if strings.Contains(row.Body, `<input type="text" name="stage_name"`) {
		t.Fatal("a stage is still typed in the source form")
	}
	if src := e.SeedSource("Web form"); src.ID != 0 {
		page := c.Get("/w/default/stages")
		_, mapping, ok := strings.Cut(page.Body, `data-testid="source-mapping-`)
		if !ok {
			t.Fatal("no per-source mapping form")
		}
		mapping, _, _ = strings.Cut(mapping, "</form>")
		handlerstest.ExpectBody(t, "per-source mapping", handlerstest.Response{Body: mapping}, `<select name="stage_name" aria-label="Stage">`, `<option value="Lost">Lost</option>`)
	}
}
