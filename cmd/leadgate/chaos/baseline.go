package chaos

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"
)

// baseline is what a direct webhook integration does: each webhook is written straight to the CRM
// (search by the raw email, then update or create) before it is answered, with no normalization, no
// ordering, no locks and no rate limiting. It answers 200 when the CRM calls succeeded and 502 when
// one failed, so the sender retries.
type baseline struct {
	crm    FakeCRMInfo
	client *http.Client
	port   int

	mu  sync.Mutex
	srv *http.Server
}

func newBaseline(crm FakeCRMInfo) (*baseline, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	b := &baseline{crm: crm, port: port, client: &http.Client{Timeout: 30 * time.Second,
		Transport: &http.Transport{MaxIdleConns: 512, MaxIdleConnsPerHost: 512}}}
	return b, b.start()
}

func (b *baseline) url() string { return "http://127.0.0.1:" + strconv.Itoa(b.port) + "/hook" }

func (b *baseline) start() error {
	ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(b.port))
	if err != nil {
		return fmt.Errorf("baseline: listen: %w", err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(b.hook), ReadHeaderTimeout: 5 * time.Second}
	b.mu.Lock()
	b.srv = srv
	b.mu.Unlock()
	go func() { _ = srv.Serve(ln) }()
	return nil
}

// crash closes the listener and every connection at once, as a killed process would, then serves
// again after a second.
func (b *baseline) crash(ctx context.Context) error {
	b.mu.Lock()
	srv := b.srv
	b.mu.Unlock()
	_ = srv.Close()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(time.Second):
	}
	return b.start()
}

func (b *baseline) stop() {
	b.mu.Lock()
	defer b.mu.Unlock()
	_ = b.srv.Close()
	b.client.CloseIdleConnections()
}

// hook writes one webhook to the CRM.
func (b *baseline) hook(w http.ResponseWriter, r *http.Request) {
	var in struct {
		EventType string `json:"event_type"`
		Email     string `json:"email"`
		Phone     string `json:"phone"`
		FirstName string `json:"first_name"`
		LastName  string `json:"last_name"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&in); err != nil {
		http.Error(w, "bad json", http.StatusBadRequest)
		return
	}
	stage := ""
	for _, ch := range Channels {
		if ch.EventType == in.EventType {
			stage = Stages[ch.Stage]
		}
	}
	contact := map[string]any{"phone": in.Phone, "firstName": in.FirstName, "lastName": in.LastName,
		"fieldValues": []map[string]string{{"field": StageFieldID, "value": stage}}}
	if err := b.upsert(r.Context(), in.Email, contact); err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, `{"status":"ok"}`)
}

// upsert searches by the raw email, then updates the first match or creates a contact.
func (b *baseline) upsert(ctx context.Context, email string, contact map[string]any) error {
	var found struct {
		Contacts []struct {
			ID string `json:"id"`
		} `json:"contacts"`
	}
	if err := b.call(ctx, http.MethodGet, "/api/3/contacts?email="+url.QueryEscape(email), nil, &found); err != nil {
		return err
	}
	if len(found.Contacts) > 0 {
		return b.call(ctx, http.MethodPut, "/api/3/contacts/"+found.Contacts[0].ID, map[string]any{"contact": contact}, nil)
	}
	contact["email"] = email
	return b.call(ctx, http.MethodPost, "/api/3/contacts", map[string]any{"contact": contact}, nil)
}

func (b *baseline) call(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		raw, _ := json.Marshal(in) // maps of strings always encode
		body = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, b.crm.URL+path, body)
	if err != nil {
		return err
	}
	req.Header.Set("Api-Token", b.crm.Token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := b.client.Do(req)
	if err != nil {
		return fmt.Errorf("crm %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("crm %s %s: status %d", method, path, resp.StatusCode)
	}
	if out != nil {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			return errors.Join(fmt.Errorf("crm %s %s: decode", method, path), err)
		}
	}
	return nil
}
