package api_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/leadgate/leadgate/handlers/api"
	"github.com/leadgate/leadgate/handlers/handlerstest"
	"github.com/leadgate/leadgate/internal/principal"
	"github.com/leadgate/leadgate/models"
)

// The JSON API's workspace routes refuse a signed-in user restricted to other
// workspaces, and list only theirs; a token without a workspace scope is not
// restricted (scoped tokens: handlers/api/token_scope_test.go).
func TestAPIWorkspaceAccessForUsers(t *testing.T) {
	t.Parallel()
	e := handlerstest.NewRestrictedEnv(t)
	api := &api.API{Store: e.Store, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	as := func(p principal.Principal) http.Handler {
		r := chi.NewRouter()
		r.Use(func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
				next.ServeHTTP(w, req.WithContext(principal.With(req.Context(), p)))
			})
		})
		r.Get("/workspaces", api.ListWorkspaces)
		r.With(api.LoadWorkspace).Get("/workspaces/{ws}/role", func(w http.ResponseWriter, req *http.Request) {
			got, _ := principal.From(req.Context())
			_, _ = w.Write([]byte(got.Role))
		})
		return r
	}
	user := principal.Principal{Kind: "user", ID: e.Member.ID, Name: e.Member.Email, Role: models.RoleEditor}
	token := principal.Principal{Kind: "token", ID: 1, Name: "ci", Role: models.RoleViewer}
	cases := []struct {
		who    principal.Principal
		path   string
		status int
		body   string
	}{
		{user, "/workspaces/default/role", http.StatusForbidden, `"error":"no access to workspace default"`},
		{user, "/workspaces/acme/role", http.StatusOK, models.RoleEditor},
		{user, "/workspaces/beta/role", http.StatusOK, models.RoleViewer},
		{token, "/workspaces/default/role", http.StatusOK, models.RoleViewer},
	}
	for _, c := range cases {
		rec := httptest.NewRecorder()
		as(c.who).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, c.path, nil))
		if rec.Code != c.status || !strings.Contains(rec.Body.String(), c.body) {
			t.Fatalf("%s %s: %d %s, want %d %s", c.who.Kind, c.path, rec.Code, rec.Body, c.status, c.body)
		}
	}
	for who, want := range map[principal.Principal][]string{user: {"acme", "beta"}, token: {"default", "acme", "beta"}} {
		rec := httptest.NewRecorder()
		as(who).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/workspaces", nil))
		var out struct {
			Workspaces []struct{ Slug string } `json:"workspaces"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, w := range out.Workspaces {
			got = append(got, w.Slug)
		}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("%s lists %v, want %v", who.Kind, got, want)
		}
	}
}
