// Package hooks serves the webhook endpoint, POST and GET /hooks/{token}: it reads the delivery and
// hands it to ingest, which answers.
package hooks

import (
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"

	"github.com/go-chi/chi/v5"

	"github.com/leadgate/leadgate/handlers"
	"github.com/leadgate/leadgate/ingest"
)

// Hooks receives webhooks at /hooks/{token}.
type Hooks struct {
	Ingest    *ingest.Service
	MaxBody   int64
	PublicURL string // base of the URL senders call (signatures over the URL use it)
}

// ReceiveWebhook answers a delivery in milliseconds; 200 only once the event is durable.
func (h *Hooks) ReceiveWebhook(w http.ResponseWriter, r *http.Request) {
	var body []byte
	if r.Method == http.MethodPost {
		var err error
		body, err = io.ReadAll(http.MaxBytesReader(w, r.Body, h.MaxBody))
		if err != nil {
			status, msg := http.StatusBadRequest, "body could not be read"
			var tooBig *http.MaxBytesError
			if errors.As(err, &tooBig) {
				status, msg = http.StatusRequestEntityTooLarge, "body exceeds "+strconv.FormatInt(h.MaxBody, 10)+" bytes"
			}
			h.Ingest.Refuse(r.Context(), chi.URLParam(r, "token"), status, msg)
			handlers.WriteError(w, status, "", msg)
			return
		}
	}
	var query url.Values
	if r.Method == http.MethodGet {
		query = r.URL.Query() // only the hub.challenge handshake reads it
	}
	ans := h.Ingest.Receive(r.Context(), ingest.Delivery{
		Token:       chi.URLParam(r, "token"),
		Method:      r.Method,
		URL:         h.PublicURL + r.URL.RequestURI(),
		Query:       query,
		Header:      r.Header,
		ContentType: r.Header.Get("Content-Type"),
		Body:        body,
	})
	if ans.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(ans.RetryAfter))
	}
	if ans.Text != "" {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(ans.Status)
		_, _ = io.WriteString(w, ans.Text)
		return
	}
	handlers.WriteJSON(w, ans.Status, ans.Body)
}
