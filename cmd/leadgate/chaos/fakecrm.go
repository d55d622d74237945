package chaos

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"strconv"
	"time"

	"github.com/leadgate/leadgate/crm/crmfake"
)

// The fake account's custom fields: the stage field leadgate's destination writes (stage_field "1")
// and the loop-breaker fields the ActiveCampaign adapter requires.
const (
	StageFieldID = "1"
	fakeCRMToken = "chaos-ac-token"
)

var fakeFields = []crmfake.ACField{
	{ID: StageFieldID, Title: "Lifecycle stage", Perstag: "LIFECYCLE_STAGE"},
	{ID: "2", Title: "last_automation_source", Perstag: "LAST_AUTOMATION_SOURCE"},
	{ID: "3", Title: "sync_timestamp", Perstag: "SYNC_TIMESTAMP"},
	{ID: "4", Title: "last_channel", Perstag: "LAST_CHANNEL"},
}

// FakeCRMOptions configure a fake ActiveCampaign account.
type FakeCRMOptions struct {
	RPS     int           // per-account limit per second (429 + Retry-After: 1 beyond it); 0 = none
	Latency time.Duration // added to every request
	Seed    uint64
}

// FakeCRMInfo is the line `leadgate chaos fakecrm` prints on stdout once it serves.
type FakeCRMInfo struct {
	URL     string `json:"url"`     // the ActiveCampaign base URL (API under /api/3/)
	Control string `json:"control"` // the control API
	Token   string `json:"token"`   // the Api-Token it accepts
}

// FakeCRM is a crmfake.ActiveCampaign with a control API for the chaos run, on its own listener:
//
//	POST /fail-rate {"rate":0.0-1.0}   share of requests answered 503 (a storm is 1.0)
//	GET  /summary                      request counts by status and the most requests in any 1 s
//	GET  /contacts                     every contact: id, email, phone, stage (custom field 1)
//	GET  /stage-writes                 every contact write that carried a stage, in order
type FakeCRM struct {
	AC      *crmfake.ActiveCampaign
	control *http.Server
	ln      net.Listener
}

// NewFakeCRM starts the fake account and its control API on 127.0.0.1.
func NewFakeCRM(o FakeCRMOptions) (*FakeCRM, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("fakecrm: control listener: %w", err)
	}
	f := &FakeCRM{ln: ln, AC: crmfake.NewActiveCampaign(crmfake.ACOptions{
		Options: crmfake.Options{Token: fakeCRMToken, RateLimit: o.RPS, RateWindow: time.Second, RetryAfter: 1,
			Latency: o.Latency, Seed: o.Seed},
		Fields: fakeFields,
	})}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /fail-rate", f.setFailRate)
	mux.HandleFunc("GET /summary", f.summary)
	mux.HandleFunc("GET /contacts", f.contacts)
	mux.HandleFunc("GET /stage-writes", f.stageWrites)
	f.control = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = f.control.Serve(ln) }()
	return f, nil
}

// Info says where the fake serves.
func (f *FakeCRM) Info() FakeCRMInfo {
	return FakeCRMInfo{URL: f.AC.URL, Control: "http://" + f.ln.Addr().String(), Token: fakeCRMToken}
}

// Close stops both servers.
func (f *FakeCRM) Close() {
	_ = f.control.Close()
	f.AC.Close()
}

func (f *FakeCRM) setFailRate(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Rate float64 `json:"rate"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.Rate < 0 || in.Rate > 1 {
		http.Error(w, `{"error":"body must be {\"rate\": 0..1}"}`, http.StatusBadRequest)
		return
	}
	f.AC.SetFailRate(in.Rate)
	w.WriteHeader(http.StatusNoContent)
}

// CRMSummary is the fake's request log, counted.
type CRMSummary struct {
	Requests int            `json:"requests"`
	ByStatus map[string]int `json:"by_status"`
	MaxIn1s  int            `json:"max_in_1s"`
}

func (f *FakeCRM) summary(w http.ResponseWriter, _ *http.Request) {
	reqs := f.AC.Requests()
	s := CRMSummary{Requests: len(reqs), ByStatus: map[string]int{}}
	// The limit is the account's: a request without its token (someone probing the port) is not the
	// account's and does not count towards its windows.
	times := make([]time.Time, 0, len(reqs))
	for _, r := range reqs {
		s.ByStatus[strconv.Itoa(r.Status)]++
		if r.Status != http.StatusUnauthorized {
			times = append(times, r.Time)
		}
	}
	s.MaxIn1s = crmfake.MaxInWindow(times, time.Second)
	writeJSONResponse(w, s)
}

// CRMContact is one contact of the fake account.
type CRMContact struct {
	ID    string `json:"id"`
	Email string `json:"email"`
	Phone string `json:"phone"`
	Stage string `json:"stage"`
}

func (f *FakeCRM) contacts(w http.ResponseWriter, _ *http.Request) {
	out := []CRMContact{}
	for _, c := range f.AC.Contacts() {
		out = append(out, CRMContact{ID: c.ID, Email: c.Email, Phone: c.Phone, Stage: c.Fields[StageFieldID]})
	}
	writeJSONResponse(w, out)
}

// StageWrite is one accepted contact write that set the stage field.
type StageWrite struct {
	ContactID string `json:"contact_id"`
	Stage     string `json:"stage"`
}

func (f *FakeCRM) stageWrites(w http.ResponseWriter, _ *http.Request) {
	out := []StageWrite{}
	for _, m := range f.AC.Mutations() {
		if v, ok := m.FieldValues[StageFieldID]; ok {
			out = append(out, StageWrite{ContactID: m.ContactID, Stage: v})
		}
	}
	writeJSONResponse(w, out)
}

func writeJSONResponse(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// fakeCRMProc is a `leadgate chaos fakecrm` child process and a client of its control API.
type fakeCRMProc struct {
	FakeCRMInfo
	proc *child
	http *http.Client
}

// startFakeCRM runs `<bin> chaos fakecrm` and reads the line it prints once it serves.
func startFakeCRM(ctx context.Context, bin, logPath string, o FakeCRMOptions) (*fakeCRMProc, error) {
	cmd := exec.Command(bin, "chaos", "fakecrm", "--rps", strconv.Itoa(o.RPS), "--latency", o.Latency.String(),
		"--seed", strconv.FormatUint(o.Seed, 10))
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("fakecrm: %w", err)
	}
	p, err := startChild(cmd, logPath)
	if err != nil {
		return nil, fmt.Errorf("fakecrm: %w", err)
	}
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		_, _ = io.Copy(io.Discard, stdout)
	}()
	f := &fakeCRMProc{proc: p, http: &http.Client{Timeout: 60 * time.Second}}
	select {
	case line, ok := <-lines:
		if !ok || json.Unmarshal([]byte(line), &f.FakeCRMInfo) != nil || f.URL == "" {
			p.kill()
			return nil, fmt.Errorf("fakecrm: unexpected first line %q (log: %s)", line, logPath)
		}
	case <-time.After(30 * time.Second):
		p.kill()
		return nil, errors.New("fakecrm: did not start within 30 s")
	case <-ctx.Done():
		p.kill()
		return nil, ctx.Err()
	}
	return f, nil
}

func (f *fakeCRMProc) stop() { f.proc.terminate(5 * time.Second) }

// setFailRate starts (1) or ends (0) a 503 storm.
func (f *fakeCRMProc) setFailRate(ctx context.Context, rate float64) error {
	body := fmt.Sprintf(`{"rate":%g}`, rate)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, f.Control+"/fail-rate", stringsReader(body))
	if err != nil {
		return err
	}
	resp, err := f.http.Do(req)
	if err != nil {
		return fmt.Errorf("fakecrm: set fail rate: %w", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		return fmt.Errorf("fakecrm: set fail rate: status %d", resp.StatusCode)
	}
	return nil
}

func (f *fakeCRMProc) get(ctx context.Context, path string, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, f.Control+path, nil)
	if err != nil {
		return err
	}
	resp, err := f.http.Do(req)
	if err != nil {
		return fmt.Errorf("fakecrm: GET %s: %w", path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("fakecrm: GET %s: status %d", path, resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("fakecrm: GET %s: %w", path, err)
	}
	return nil
}

// crmState is everything the report needs from the fake after a run.
type crmState struct {
	Summary  CRMSummary
	Contacts []CRMContact
	Writes   []StageWrite
}

func (f *fakeCRMProc) state(ctx context.Context) (crmState, error) {
	var s crmState
	err := errors.Join(f.get(ctx, "/summary", &s.Summary), f.get(ctx, "/contacts", &s.Contacts), f.get(ctx, "/stage-writes", &s.Writes))
	return s, err
}
