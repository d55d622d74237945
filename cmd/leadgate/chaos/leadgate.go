package chaos

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// workspace is the chaos run's workspace in leadgate: a new workspace has no destination but the one
// the run adds.
const workspace = "chaos"

// leadgateProc runs `leadgate serve` and talks to its admin API.
type leadgateProc struct {
	bin, logPath string
	args         []string // after "serve" (e.g. --role web)
	env          []string
	base         string // http://127.0.0.1:port
	token        string
	proc         *child
	http         *http.Client
	started      bool // served once: its URL is in use and must not change
}

// leadgateEnv is the process environment: the caller's, minus any LEADGATE_ setting, plus vars.
func leadgateEnv(vars map[string]string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "LEADGATE_") {
			env = append(env, kv)
		}
	}
	for k, v := range vars {
		env = append(env, k+"="+v)
	}
	return env
}

func newLeadgate(ctx context.Context, bin, dir, databaseURL, redisURL string, workers int) (*leadgateProc, error) {
	l, err := prepareLeadgate(ctx, bin, dir, databaseURL, redisURL, workers)
	if err != nil {
		return nil, err
	}
	return l, l.start(ctx)
}

// prepareLeadgate migrates the database and creates the admin token, without starting serve.
func prepareLeadgate(ctx context.Context, bin, dir, databaseURL, redisURL string, workers int) (*leadgateProc, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	key := make([]byte, 24)
	_, _ = rand.Read(key)
	l := &leadgateProc{bin: bin, logPath: filepath.Join(dir, "leadgate.log"), base: "http://127.0.0.1:" + strconv.Itoa(port),
		http: &http.Client{Timeout: 60 * time.Second}}
	l.env = leadgateEnv(map[string]string{
		"LEADGATE_DATABASE_URL":       databaseURL,
		"LEADGATE_REDIS_URL":          redisURL,
		"LEADGATE_ADDR":               "127.0.0.1:" + strconv.Itoa(port),
		"LEADGATE_PUBLIC_URL":         l.base,
		"LEADGATE_SECRET_KEY":         hex.EncodeToString(key),
		"LEADGATE_SPOOL_DIR":          filepath.Join(dir, "spool"),
		"LEADGATE_WORKER_CONCURRENCY": strconv.Itoa(workers),
		"LEADGATE_LOG_LEVEL":          "warn",
		// The fake CRMs and webhook receivers listen on 127.0.0.1: open the SSRF guard for them.
		"LEADGATE_EGRESS_ALLOWED_HOSTS": "127.0.0.1",
	})
	// `token create` migrates (creating the database) and prints the token as its last line.
	cmd := exec.CommandContext(ctx, bin, "token", "create", "--name", "chaos", "--role", "admin")
	cmd.Env = l.env
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("leadgate token create: %w\n%s", err, errOut.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	l.token = strings.TrimSpace(lines[len(lines)-1])
	return l, nil
}

// start runs `leadgate serve` and waits until it answers as itself: /readyz is 200 and the admin token
// is accepted. The port was free when it was chosen, but parallel tests (other packages too) choose
// ports at the same time: when another process took it first, a first start moves to a new port; a
// restart (the URL already handed out in webhooks) tries the same port again.
func (l *leadgateProc) start(ctx context.Context) error {
	var err error
	for attempt := 1; attempt <= 5; attempt++ {
		if err = l.startOnce(ctx); err == nil || !strings.Contains(tail(l.logPath, 5), "address already in use") {
			if err == nil {
				l.started = true
			}
			return err
		}
		if l.proc != nil {
			l.proc.kill()
		}
		if !l.started {
			port, perr := freePort()
			if perr != nil {
				return perr
			}
			l.base = "http://127.0.0.1:" + strconv.Itoa(port)
			l.env = withVars(l.env, map[string]string{"LEADGATE_ADDR": "127.0.0.1:" + strconv.Itoa(port), "LEADGATE_PUBLIC_URL": l.base})
		} else {
			time.Sleep(time.Second)
		}
	}
	return err
}

func (l *leadgateProc) startOnce(ctx context.Context) error {
	cmd := exec.Command(l.bin, append([]string{"serve"}, l.args...)...)
	cmd.Env = l.env
	p, err := startChild(cmd, l.logPath)
	if err != nil {
		return fmt.Errorf("leadgate serve: %w", err)
	}
	l.proc = p
	err = waitFor(ctx, 60*time.Second, "leadgate /readyz", func() bool {
		if !p.running() {
			return true // it exited: say so below rather than wait out the timeout
		}
		return httpOK(ctx, l.http, l.base+"/readyz") && l.api(ctx, http.MethodGet, "/workspaces", nil, nil) == nil
	})
	if err == nil && !p.running() {
		err = errors.New("leadgate serve exited while starting")
	}
	if err != nil {
		return fmt.Errorf("%w (log: %s)", err, l.logPath)
	}
	return nil
}

// sigkill kills the process without warning and starts a new one on the same state.
func (l *leadgateProc) sigkill(ctx context.Context) error {
	l.proc.kill()
	return l.start(ctx)
}

func (l *leadgateProc) stop() {
	if l.proc != nil {
		l.proc.terminate(20 * time.Second)
	}
}

// apiError is an admin API answer that was not the expected status.
type apiError struct {
	Status int
	Body   string
}

func (e *apiError) Error() string { return fmt.Sprintf("status %d: %s", e.Status, e.Body) }

// api calls the admin API; in (if not nil) is sent as JSON, out (if not nil) decoded from a 2xx answer.
func (l *leadgateProc) api(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, l.base+"/api/v1"+path, body)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+l.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := l.http.Do(req)
	if err != nil {
		return fmt.Errorf("leadgate API %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return fmt.Errorf("leadgate API %s %s: %w", method, path, err)
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("leadgate API %s %s: %w", method, path, &apiError{Status: resp.StatusCode, Body: strings.TrimSpace(string(raw))})
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			return fmt.Errorf("leadgate API %s %s: decode: %w", method, path, err)
		}
	}
	return nil
}

// setup creates the chaos workspace, its stage rules, one standard-webhooks source per channel and the
// ActiveCampaign destination. It returns the channels' targets and whether leadgate has the CRM sync
// (the destinations API); without it the run measures leadgate's own contacts instead of the CRM.
func (l *leadgateProc) setup(ctx context.Context, crm FakeCRMInfo, rps int) ([]Target, bool, error) {
	if err := l.api(ctx, http.MethodPost, "/workspaces", map[string]string{"slug": workspace, "name": "Chaos run"}, nil); err != nil {
		return nil, false, err
	}
	eventStages := map[string]string{}
	for _, ch := range Channels {
		eventStages[ch.EventType] = Stages[ch.Stage]
	}
	rules := map[string]any{"stages": Stages, "allow_skip": true, "allow_regression": false,
		"on_state_conflict": "apply_fields_keep_stage", "event_stages": eventStages}
	if err := l.api(ctx, http.MethodPut, "/workspaces/"+workspace+"/stages", rules, nil); err != nil {
		return nil, false, err
	}
	var targets []Target
	for _, ch := range Channels {
		var out struct {
			IngestURL string `json:"ingest_url"`
			Secret    string `json:"secret"`
		}
		src := map[string]any{"name": ch.Name, "kind": "standard-webhooks", "channel": ch.Name, "default_region": "US",
			"event_stages": map[string]string{ch.EventType: Stages[ch.Stage]}}
		if err := l.api(ctx, http.MethodPost, "/workspaces/"+workspace+"/sources", src, &out); err != nil {
			return nil, false, err
		}
		targets = append(targets, Target{URL: out.IngestURL, Secret: out.Secret})
	}
	dest := map[string]any{"name": "Fake ActiveCampaign", "kind": "activecampaign", "base_url": crm.URL, "api_token": crm.Token,
		"stage_field": StageFieldID, "rate_limit_rps": rps, "batch_size": 20}
	err := l.api(ctx, http.MethodPost, "/workspaces/"+workspace+"/destinations", dest, nil)
	var ae *apiError
	if errors.As(err, &ae) && (ae.Status == http.StatusNotFound || ae.Status == http.StatusMethodNotAllowed) {
		return targets, false, nil
	}
	return targets, err == nil, err
}

// stats is CONTRACT.md's GET /stats.
type stats struct {
	Events struct {
		Received, Accepted, Duplicates, Applied, Unchanged, Quarantined, Rejected, Dropped, Unresolved int64
	} `json:"events"`
	DeadLetters   int64 `json:"dead_letters"`
	OutboxPending int64 `json:"outbox_pending"`
}

func (l *leadgateProc) stats(ctx context.Context) (stats, error) {
	var s stats
	err := l.api(ctx, http.MethodGet, "/workspaces/"+workspace+"/stats", nil, &s)
	return s, err
}

// settleAfter is how long a drain waits without any progress (no change in unresolved events,
// pending outbox, open dead letters or CRM requests) before it stops waiting for a stuck remainder. It
// exceeds the sync relay's longest inline backoff (32 s + 50 % jitter).
const settleAfter = 60 * time.Second

// drain waits until every event has an outcome and (with the CRM sync) the outbox is empty, checking
// every second, or until nothing has moved for settleAfter; progress goes to logf every 10 s.
// crmRequests (nil: none) counts the requests the CRM has received, as a sign of sync activity.
func (l *leadgateProc) drain(ctx context.Context, timeout time.Duration, syncing bool, crmRequests func() int, logf func(string, ...any)) (stats, error) {
	deadline := time.Now().Add(timeout)
	var last stats
	lastLog, lastChange := time.Now(), time.Now()
	var mark [4]int64
	for {
		s, err := l.stats(ctx)
		if err == nil {
			last = s
			if s.Events.Unresolved == 0 && (!syncing || s.OutboxPending == 0) {
				return s, nil
			}
			m := [4]int64{s.Events.Unresolved, s.OutboxPending, s.DeadLetters, 0}
			if crmRequests != nil {
				m[3] = int64(crmRequests())
			}
			if m != mark {
				mark, lastChange = m, time.Now()
			}
			if s.Events.Unresolved == 0 && time.Since(lastChange) >= settleAfter {
				return s, fmt.Errorf("leadgate: %d outbox rows still pending after %s without progress", s.OutboxPending, settleAfter)
			}
		}
		if time.Since(lastLog) >= 10*time.Second {
			logf("leadgate: draining: %d accepted, %d unresolved, %d outbox pending, %d dead letters",
				last.Events.Accepted, last.Events.Unresolved, last.OutboxPending, last.DeadLetters)
			lastLog = time.Now()
		}
		if time.Now().After(deadline) {
			return last, fmt.Errorf("leadgate: not drained within %s: %d unresolved events, %d outbox pending",
				timeout, last.Events.Unresolved, last.OutboxPending)
		}
		select {
		case <-ctx.Done():
			return last, ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// pages reads every page of a list endpoint; each page's items are handed to add as raw JSON.
func (l *leadgateProc) pages(ctx context.Context, path, key string, add func(json.RawMessage) error) error {
	cursor := ""
	for {
		q := url.Values{"limit": {"500"}}
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		var page map[string]json.RawMessage
		if err := l.api(ctx, http.MethodGet, path+"?"+q.Encode(), nil, &page); err != nil {
			return err
		}
		var items []json.RawMessage
		if err := json.Unmarshal(page[key], &items); err != nil {
			return fmt.Errorf("leadgate API %s: %s: %w", path, key, err)
		}
		for _, it := range items {
			if err := add(it); err != nil {
				return err
			}
		}
		var next any
		_ = json.Unmarshal(page["next_cursor"], &next)
		if next == nil || len(items) == 0 {
			return nil
		}
		cursor = fmt.Sprint(next)
		if f, ok := next.(float64); ok {
			cursor = strconv.FormatInt(int64(f), 10)
		}
	}
}

// eventStatuses maps every event id of the workspace to its status.
func (l *leadgateProc) eventStatuses(ctx context.Context) (map[string]string, error) {
	out := map[string]string{}
	err := l.pages(ctx, "/workspaces/"+workspace+"/events", "events", func(raw json.RawMessage) error {
		var e struct{ ID, Status string }
		if err := json.Unmarshal(raw, &e); err != nil {
			return err
		}
		out[e.ID] = e.Status
		return nil
	})
	return out, err
}

// contacts lists leadgate's contacts as CRM-shaped records (the view used when there is no CRM sync).
func (l *leadgateProc) contacts(ctx context.Context) ([]CRMContact, error) {
	var out []CRMContact
	err := l.pages(ctx, "/workspaces/"+workspace+"/contacts", "contacts", func(raw json.RawMessage) error {
		var c struct {
			ID         string  `json:"id"`
			Email      *string `json:"email"`
			Phone      *string `json:"phone"`
			Stage      string  `json:"stage"`
			MergedInto *string `json:"merged_into"`
		}
		if err := json.Unmarshal(raw, &c); err != nil {
			return err
		}
		if c.MergedInto == nil {
			out = append(out, CRMContact{ID: c.ID, Email: deref(c.Email), Phone: deref(c.Phone), Stage: c.Stage})
		}
		return nil
	})
	return out, err
}

// deadLetterKinds counts the workspace's dead letters by kind and status.
func (l *leadgateProc) deadLetterKinds(ctx context.Context) (map[string]int, error) {
	out := map[string]int{}
	err := l.pages(ctx, "/workspaces/"+workspace+"/dead-letters", "dead_letters", func(raw json.RawMessage) error {
		var d struct{ Kind, Status string }
		if err := json.Unmarshal(raw, &d); err != nil {
			return err
		}
		out[d.Kind+" ("+d.Status+")"]++
		return nil
	})
	return out, err
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// tail returns the last n lines of a log file, for error messages.
func tail(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if len(lines) > n {
			lines = lines[1:]
		}
	}
	return strings.Join(lines, "\n")
}
