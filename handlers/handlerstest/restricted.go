package handlerstest

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"testing"

	"github.com/leadgate/leadgate/models"
)

// RestrictedEnv has workspaces acme and beta besides default, an admin, and
// client@example.com (a global editor) restricted by the admin through the
// users page to acme as editor and beta as viewer.
type RestrictedEnv struct {
	*Env
	AdminClient, MemberClient *Client
	Member                    models.User
	Acme, Beta                models.Workspace
}

// NewRestrictedEnv builds it; the grants go through the users page, as an admin gives them.
func NewRestrictedEnv(t *testing.T) RestrictedEnv {
	t.Helper()
	e := NewEnv(t)
	ctx := context.Background()
	acme, err := e.Store.WorkspaceCreate(ctx, "acme", "Acme")
	if err != nil {
		t.Fatal(err)
	}
	beta, err := e.Store.WorkspaceCreate(ctx, "beta", "Beta")
	if err != nil {
		t.Fatal(err)
	}
	user := e.User("client@example.com", models.RoleEditor)
	admin := e.SignedIn(models.RoleAdmin)
	admin.Get("/users")
	for _, g := range []struct{ ws, role string }{{"acme", models.RoleEditor}, {"beta", models.RoleViewer}} {
		res := admin.Post(UserPath(user, "/workspaces"), url.Values{"workspace": {g.ws}, "role": {g.role}})
		ExpectRedirect(t, "grant "+g.ws, res, "/users#workspace-access")
	}
	client := e.Client()
	if res := client.Login(user.Email, Password); res.Status != http.StatusSeeOther {
		t.Fatalf("client login: %d", res.Status)
	}
	return RestrictedEnv{Env: e, AdminClient: admin, MemberClient: client, Member: user, Acme: acme, Beta: beta}
}

// UserPath is the users page path of u, with rest after it.
func UserPath(u models.User, rest string) string {
	return "/users/" + strconv.FormatInt(u.ID, 10) + rest
}
