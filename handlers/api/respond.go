package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/leadgate/leadgate/handlers"
	"github.com/leadgate/leadgate/models"
)

// maxAPIBody caps admin API request bodies.
const maxAPIBody = 1 << 20

// decodeJSON reads a strict JSON body into dst, answering 400/413/415 itself.
func decodeJSON(w http.ResponseWriter, r *http.Request, dst any) bool {
	// The body is read as JSON whatever Content-Type says: `curl -d` labels
	// JSON as a form, and refusing it would only annoy operators.
	if ct := r.Header.Get("Content-Type"); strings.HasPrefix(ct, "multipart/") {
		handlers.WriteError(w, http.StatusUnsupportedMediaType, "", "send application/json")
		return false
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxAPIBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		var tooBig *http.MaxBytesError
		var typeErr *json.UnmarshalTypeError
		switch {
		case errors.As(err, &tooBig):
			handlers.WriteError(w, http.StatusRequestEntityTooLarge, "", "request body too large")
		case errors.As(err, &typeErr):
			handlers.WriteError(w, http.StatusBadRequest, typeErr.Field, fmt.Sprintf("%s must be a %s", typeErr.Field, typeErr.Type))
		case strings.HasPrefix(err.Error(), "json: unknown field "):
			f := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
			handlers.WriteError(w, http.StatusBadRequest, f, "unknown field "+f)
		case errors.Is(err, io.EOF):
			handlers.WriteError(w, http.StatusBadRequest, "", "request body is empty")
		default:
			handlers.WriteError(w, http.StatusBadRequest, "", "malformed JSON: "+err.Error())
		}
		return false
	}
	if dec.More() {
		handlers.WriteError(w, http.StatusBadRequest, "", "request body has trailing data")
		return false
	}
	return true
}

// pageFrom parses ?limit= (default 50, max 500) and ?cursor=.
func pageFrom(w http.ResponseWriter, r *http.Request) (models.Page, bool) {
	p := models.Page{Limit: 50, Cursor: r.URL.Query().Get("cursor")}
	if raw := r.URL.Query().Get("limit"); raw != "" {
		n, err := strconv.Atoi(raw)
		if err != nil || n < 1 || n > 500 {
			handlers.WriteError(w, http.StatusBadRequest, "limit", "limit must be a whole number from 1 to 500")
			return p, false
		}
		p.Limit = n
	}
	return p, true
}

// cursorParses checks ?cursor= against the list's key (intCursor, uuidCursor) and answers 400 when it
// is not one.
func cursorParses(w http.ResponseWriter, page models.Page, parse func(string) error) bool {
	if page.Cursor == "" || parse(page.Cursor) == nil {
		return true
	}
	handlers.WriteError(w, http.StatusBadRequest, "cursor", "invalid cursor")
	return false
}

// intCursor accepts the cursor of a list keyed by an integer id.
func intCursor(s string) error {
	_, err := strconv.ParseInt(s, 10, 64)
	return err
}

// uuidCursor accepts the cursor of a list keyed by a UUID.
func uuidCursor(s string) error {
	_, err := uuid.Parse(s)
	return err
}

// nextCursor returns the cursor for the following page, or nil at the end.
func nextCursor(n, limit int, last string) *string {
	if n < limit || last == "" {
		return nil
	}
	return &last
}
