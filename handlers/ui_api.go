package handlers

import (
	"bytes"
	"encoding/json"
	"net/http"
)

// apiResult is what one of the JSON API's handlers answered a web form.
type apiResult struct {
	Status int
	Field  string // the API's "field" on an error
	Error  string // the API's "error" on an error
	Body   []byte
}

// OK reports a 2xx answer.
func (a apiResult) OK() bool { return a.Status >= 200 && a.Status < 300 }

// api is the JSON API over the same store and applier, so web forms share
// its implementation of an action: validation, the transaction and the audit.
func (u *UI) api() *API {
	return &API{Store: u.Store, Box: u.Box, Sources: u.Sources, PublicURL: u.PublicURL, Log: u.Log, Applier: u.Applier, EraseHooks: u.EraseHooks}
}

// viaAPI runs an API handler for a web form with body as its JSON request.
// The request keeps r's context (principal, workspace) and URL parameters.
func (u *UI) viaAPI(r *http.Request, h http.HandlerFunc, method string, body any) apiResult {
	b, err := json.Marshal(body)
	if err != nil {
		return apiResult{Status: http.StatusInternalServerError, Error: err.Error()}
	}
	req := r.Clone(r.Context())
	req.Method = method
	req.Body = http.NoBody
	req.ContentLength = int64(len(b))
	if len(b) > 0 {
		req.Body = readCloser{bytes.NewReader(b)}
	}
	req.Header.Set("Content-Type", "application/json")
	rec := &recorder{header: http.Header{}, status: http.StatusOK}
	h(rec, req)
	res := apiResult{Status: rec.status, Body: rec.body.Bytes()}
	if !res.OK() {
		var e apiError
		if json.Unmarshal(res.Body, &e) == nil {
			res.Field, res.Error = e.Field, e.Error
		}
	}
	return res
}

type readCloser struct{ *bytes.Reader }

func (readCloser) Close() error { return nil }

// recorder captures an API handler's answer in memory.
type recorder struct {
	header http.Header
	status int
	wrote  bool
	body   bytes.Buffer
}

func (w *recorder) Header() http.Header { return w.header }

func (w *recorder) WriteHeader(status int) {
	if !w.wrote {
		w.status, w.wrote = status, true
	}
}

func (w *recorder) Write(b []byte) (int, error) {
	w.wrote = true
	return w.body.Write(b)
}
