package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/leadgate/leadgate/cmd/leadgate/app"
	"github.com/leadgate/leadgate/cmd/leadgate/config"
	"github.com/leadgate/leadgate/internal/testkit"
	"github.com/leadgate/leadgate/models"
	"github.com/leadgate/leadgate/web"
)

// openAPIDoc is the part of the OpenAPI document the checks read.
type openAPIDoc struct {
	OpenAPI    string                                 `json:"openapi"`
	Security   []map[string][]string                  `json:"security"`
	Paths      map[string]map[string]openAPIOperation `json:"paths"`
	Components struct {
		SecuritySchemes map[string]struct {
			Type   string `json:"type"`
			Scheme string `json:"scheme"`
		} `json:"securitySchemes"`
	} `json:"components"`
}

type openAPIOperation struct {
	OperationID string                `json:"operationId"`
	Security    []map[string][]string `json:"security"` // nil: the document's default (bearer)
	Parameters  []struct {
		Name string `json:"name"`
		In   string `json:"in"`
	} `json:"parameters"`
}

// documented reports whether the API surface under test includes path.
func documented(path string) bool {
	return strings.HasPrefix(path, "/api/v1/") || strings.HasPrefix(path, "/hooks/")
}

// routerRoutes walks the real router and returns "METHOD path" for every
// /api/v1 and /hooks route.
func routerRoutes(t *testing.T, h http.Handler) map[string]bool {
	t.Helper()
	routes, ok := h.(chi.Routes)
	if !ok {
		t.Fatalf("web.Routes returned %T, not a chi router", h)
	}
	out := map[string]bool{}
	err := chi.Walk(routes, func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		route = strings.ReplaceAll(route, "/*/", "/")
		if len(route) > 1 {
			route = strings.TrimSuffix(route, "/")
		}
		if documented(route) {
			out[method+" "+route] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func readOpenAPI(t *testing.T, raw []byte) openAPIDoc {
	t.Helper()
	var doc openAPIDoc
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("openapi.json is not valid JSON: %v", err)
	}
	return doc
}

// TestOpenAPIMatchesRouter: the document served at /api/v1/openapi.json
// describes exactly the routes the router serves under /api/v1 and /hooks.
func TestOpenAPIMatchesRouter(t *testing.T) {
	t.Parallel()
	env := map[string]string{"LEADGATE_DATABASE_URL": testkit.MigratedDatabase(t), "LEADGATE_REDIS_URL": testkit.RedisDB(t),
		"LEADGATE_SECRET_KEY": "openapi-test-secret-0123456789", "LEADGATE_SPOOL_DIR": "off",
		"LEADGATE_EGRESS_ALLOWED_HOSTS": "127.0.0.1"}
	cfg, err := config.FromEnv(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	ctx, log := context.Background(), slog.New(slog.DiscardHandler)
	store, err := models.Open(ctx, cfg.DatabaseURL, log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	if err := store.Migrate(ctx, log); err != nil {
		t.Fatal(err)
	}
	a, err := app.New(ctx, cfg, store, log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	router := web.Routes(a.Deps())
	srv := httptest.NewServer(router)
	t.Cleanup(srv.Close)

	onDisk, err := os.ReadFile("openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	doc := readOpenAPI(t, onDisk)
	routes := routerRoutes(t, router)
	if len(routes) < 50 {
		t.Fatalf("walked only %d /api/v1 and /hooks routes; the router is not fully assembled", len(routes))
	}

	t.Run("ServedWithoutTokenAsEmbedded", func(t *testing.T) {
		resp, err := http.Get(srv.URL + "/api/v1/openapi.json")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
			t.Fatalf("GET /api/v1/openapi.json = %d %q, want 200 application/json", resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		if !bytes.Equal(body, onDisk) {
			t.Fatal("the served document differs from handlers/api/openapi.json")
		}
		if doc.OpenAPI != "3.1.0" {
			t.Fatalf("openapi = %q, want 3.1.0", doc.OpenAPI)
		}
	})

	t.Run("RestOfAPIStillNeedsToken", func(t *testing.T) {
		resp, err := http.Get(srv.URL + "/api/v1/workspaces")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("GET /api/v1/workspaces without a token = %d, want 401", resp.StatusCode)
		}
	})

	t.Run("EveryRouteDocumented", func(t *testing.T) {
		var missing []string
		for r := range routes {
			method, path, _ := strings.Cut(r, " ")
			if _, ok := doc.Paths[path][strings.ToLower(method)]; !ok {
				missing = append(missing, r)
			}
		}
		slices.Sort(missing)
		if len(missing) > 0 {
			t.Fatalf("routes missing from openapi.json:\n  %s", strings.Join(missing, "\n  "))
		}
	})

	t.Run("EveryDocumentedOperationRouted", func(t *testing.T) {
		var extra []string
		for path, ops := range doc.Paths {
			for method := range ops {
				if !routes[strings.ToUpper(method)+" "+path] {
					extra = append(extra, strings.ToUpper(method)+" "+path)
				}
			}
		}
		slices.Sort(extra)
		if len(extra) > 0 {
			t.Fatalf("documented operations the router does not serve:\n  %s", strings.Join(extra, "\n  "))
		}
	})

	t.Run("PathParametersDeclared", func(t *testing.T) {
		param := regexp.MustCompile(`\{([^}]+)\}`)
		for path, ops := range doc.Paths {
			want := []string{}
			for _, m := range param.FindAllStringSubmatch(path, -1) {
				want = append(want, m[1])
			}
			for method, op := range ops {
				got := []string{}
				for _, p := range op.Parameters {
					if p.In == "path" {
						got = append(got, p.Name)
					}
				}
				slices.Sort(want)
				slices.Sort(got)
				if !slices.Equal(got, want) {
					t.Errorf("%s %s declares path parameters %v, its template has %v", method, path, got, want)
				}
			}
		}
	})

	t.Run("BearerAuthExceptPublicRoutes", func(t *testing.T) {
		s, ok := doc.Components.SecuritySchemes["bearerAuth"]
		if !ok || s.Type != "http" || s.Scheme != "bearer" {
			t.Fatalf("securitySchemes.bearerAuth = %+v, want http bearer", s)
		}
		if len(doc.Security) != 1 || doc.Security[0]["bearerAuth"] == nil {
			t.Fatalf("document security = %v, want bearerAuth by default", doc.Security)
		}
		public := func(path string) bool { return path == "/api/v1/openapi.json" || strings.HasPrefix(path, "/hooks/") }
		for path, ops := range doc.Paths {
			for method, op := range ops {
				overridden := op.Security != nil
				if public(path) && !(overridden && len(op.Security) == 0) {
					t.Errorf("%s %s is public and must declare security: []", method, path)
				}
				if !public(path) && overridden {
					t.Errorf("%s %s needs a token and must not override security", method, path)
				}
				if op.OperationID == "" {
					t.Errorf("%s %s has no operationId", method, path)
				}
			}
		}
	})
}
