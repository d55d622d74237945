package hydrate_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/leadgate/leadgate/internal/egress"
	"github.com/leadgate/leadgate/internal/secretbox"
	"github.com/leadgate/leadgate/lifecycle/hydrate"
	"github.com/leadgate/leadgate/models"
	"github.com/leadgate/leadgate/models/modelstest"
)

// graphFake serves GET /{leadgen-id}?access_token=…&fields=… as the Graph API does, with its error shape.
func graphFake(t *testing.T, token string, calls *atomic.Int32) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.URL.Query().Get("access_token") != token:
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"error":{"message":"Invalid OAuth access token.","type":"OAuthException","code":190,"fbtrace_id":"x"}}`))
		case r.URL.Path == "/444":
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"error":{"message":"(#17) User request limit reached","type":"OAuthException","code":17}}`))
		case r.URL.Path == "/123" && strings.Contains(r.URL.Query().Get("fields"), "field_data"):
			_, _ = w.Write([]byte(`{"id":"123","created_time":"2026-10-31T08:14:22+0000","ad_id":"ad9","form_id":"f1",
				"field_data":[{"name":"email","values":["Jane.Doe@Example.com"]},{"name":"full_name","values":["Jane Q Doe"]},
				{"name":"phone_number","values":["+14155550134"]},{"name":"budget","values":["10k"]}]}`))
		default:
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"error":{"message":"Unsupported get request.","code":100}}`))
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// hubspotFake serves GET /crm/v3/objects/contacts/{id} with a bearer token.
func hubspotFake(t *testing.T, token string) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.Header.Get("Authorization") != "Bearer "+token {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"status":"error","message":"Authentication credentials not found.","category":"INVALID_AUTHENTICATION"}`))
			return
		}
		if r.URL.Path != "/crm/v3/objects/contacts/501" {
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"status":"error","message":"resource not found","category":"OBJECT_NOT_FOUND"}`))
			return
		}
		_, _ = w.Write([]byte(`{"id":"501","properties":{"email":"bob@example.com","phone":null,"mobilephone":"+14155550199",
			"firstname":"Bob","lastname":"Stone","lifecyclestage":"lead"},"createdAt":"2026-10-01T00:00:00Z"}`))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func newService(t *testing.T) (*hydrate.Service, *models.Store, *secretbox.Box) {
	t.Helper()
	store := modelstest.Store(t)
	box, _ := secretbox.New("test key")
	// The provider fakes listen on 127.0.0.1, which the SSRF guard refuses unless allowed.
	return &hydrate.Service{Store: store, Box: box, Egress: egress.Outbound([]string{"127.0.0.1"})}, store, box
}

func putCred(t *testing.T, store *models.Store, box *secretbox.Box, provider, token, base string) {
	t.Helper()
	sealed, _ := box.Seal(token)
	if err := store.ProviderCredentialPut(context.Background(), models.ProviderCredential{WorkspaceID: 1, Provider: provider, TokenEnc: sealed, BaseURL: base}); err != nil {
		t.Fatal(err)
	}
}

func TestHydrateMetaLeadByLeadgenID(t *testing.T) {
	s, store, box := newService(t)
	var calls atomic.Int32
	graph := graphFake(t, "page-token", &calls)
	ctx := context.Background()
	target := json.RawMessage(`{"Provider":"meta","Object":"leadgen","ID":"123"}`)

	if _, _, _, _, _, err := s.Hydrate(ctx, 1, target); !errors.Is(err, hydrate.ErrNoCredentials) {
		t.Fatalf("without credentials: %v, want ErrNoCredentials", err)
	}
	putCred(t, store, box, "meta", "page-token", graph.URL)
	email, phone, first, last, fields, err := s.Hydrate(ctx, 1, target)
	if err != nil {
		t.Fatal(err)
	}
	if email != "Jane.Doe@Example.com" || phone != "+14155550134" || first != "Jane" || last != "Q Doe" || fields["budget"] != "10k" || fields["ad_id"] != "ad9" {
		t.Errorf("got %q %q %q %q %v", email, phone, first, last, fields)
	}

	tests := []struct {
		name      string
		target    string
		token     string
		retry     bool
		errTarget error
	}{
		{"throttled (code 17) is retryable", `{"provider":"meta","object":"leadgen","id":"444"}`, "page-token", true, nil},
		{"unknown lead is not", `{"provider":"meta","object":"leadgen","id":"999"}`, "page-token", false, nil},
		{"bad token is not, and the token is not echoed", `{"provider":"meta","object":"leadgen","id":"123"}`, "wrong", false, nil},
		{"unsupported object", `{"provider":"meta","object":"page","id":"1"}`, "page-token", false, hydrate.ErrUnsupported},
		{"missing id", `{"provider":"meta","object":"leadgen"}`, "page-token", false, hydrate.ErrUnsupported},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			putCred(t, store, box, "meta", tt.token, graph.URL)
			_, err := s.Fetch(ctx, 1, json.RawMessage(tt.target))
			if tt.errTarget != nil {
				if !errors.Is(err, tt.errTarget) {
					t.Fatalf("err = %v, want %v", err, tt.errTarget)
				}
				return
			}
			var he *hydrate.Error
			if !errors.As(err, &he) || he.Retry != tt.retry || strings.Contains(he.Error(), tt.token) {
				t.Fatalf("err = %v; want *hydrate.Error with Retry=%v and no token", err, tt.retry)
			}
		})
	}
}

func TestHydrateHubSpotContactByObjectID(t *testing.T) {
	s, store, box := newService(t)
	hs := hubspotFake(t, "hs-token")
	putCred(t, store, box, "hubspot", "hs-token", hs.URL)
	lead, err := s.Fetch(context.Background(), 1, json.RawMessage(`{"Provider":"hubspot","Object":"contact","ID":"501"}`))
	if err != nil {
		t.Fatal(err)
	}
	if lead.Email != "bob@example.com" || lead.Phone != "+14155550199" || lead.FirstName != "Bob" || lead.Fields["lifecyclestage"] != "lead" {
		t.Errorf("lead = %+v", lead)
	}
	_, err = s.Fetch(context.Background(), 1, json.RawMessage(`{"Provider":"hubspot","Object":"contact","ID":"777"}`))
	var he *hydrate.Error
	if !errors.As(err, &he) || he.Status != 404 || he.Retry {
		t.Errorf("unknown contact: %v, want a non-retryable 404", err)
	}
}

func FuzzParseTarget(f *testing.F) {
	f.Add([]byte(`{"Provider":"meta","Object":"leadgen","ID":"123"}`))
	f.Add([]byte(`{"provider":"HUBSPOT","object":"contact","id":" 5 "}`))
	f.Add([]byte(`null`))
	f.Add([]byte(`{"ID":7}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		tg, err := hydrate.ParseTarget(raw)
		if err == nil && (tg.ID == "" || tg.ID != strings.TrimSpace(tg.ID) || tg.Provider != strings.ToLower(tg.Provider)) {
			t.Fatalf("accepted %q as %+v", raw, tg)
		}
	})
}
