package api

import (
	_ "embed"
	"net/http"
)

// openAPIDocument is the OpenAPI 3.1 description of /api/v1 and /hooks/{token}.
// openapi_test.go checks it against the router, route by route.
//
//go:embed openapi.json
var openAPIDocument []byte

// OpenAPI serves the embedded OpenAPI document at GET /api/v1/openapi.json.
// It needs no token: it describes the API and holds no data.
func OpenAPI(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "public, max-age=300")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(openAPIDocument)
}
