package handlers_test

import (
	"strings"
	"testing"

	"github.com/leadgate/leadgate/models"
)

// Where a source's mapping chooses a stage, the operator picks from the
// stages in force instead of typing a name; a row added with htmx is the same.
func TestSourceMappingPicksStagesFromAList(t *testing.T) {
	t.Parallel()
	e := newUIEnv(t)
	c := e.signedIn(models.RoleEditor)
	row := c.get("/w/default/sources/stage-row", "HX-Request", "true")
	expectBody(t, "added row", row, `<select name="stage_name" aria-label="Stage"><option value="">No stage</option> <option value="Discovered">Discovered</option> <option value="Engaged">Engaged</option> <option value="SQL">SQL</option> <option value="Closed">Closed</option> <option value="Lost">Lost</option> </select>`)
	if strings.Contains(row.body, `<input type="text" name="stage_name"`) {
		t.Fatal("a stage is still typed in the source form")
	}
	if src := e.seedSource("Web form"); src.ID != 0 {
		page := c.get("/w/default/stages")
		_, mapping, ok := strings.Cut(page.body, `data-testid="source-mapping-`)
		if !ok {
			t.Fatal("no per-source mapping form")
		}
		mapping, _, _ = strings.Cut(mapping, "</form>")
		expectBody(t, "per-source mapping", uiResponse{body: mapping}, `<select name="stage_name" aria-label="Stage">`, `<option value="Lost">Lost</option>`)
	}
}
